/**
 * scripts/setup.sh's decisions, made in fake machines: a PATH of stand-ins for `id`, `node`,
 * `chromium`, `ldconfig`, `apt-get` and `apt-cache`, and nothing else, so the script can neither
 * see nor change this machine. Most cases use --dry-run (it prints what it would run); the real
 * runs here are the ones that stop before running anything.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..');
const script = join(repo, 'scripts/setup.sh');
const bash = execFileSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Machine {
  uid?: number;
  /** `node -v`; undefined: no node. */
  node?: string;
  npm?: boolean;
  chromium?: boolean;
  vulkan?: boolean;
  apt?: boolean;
  /** apt-cache's candidate nodejs version. */
  aptNode?: string;
}

const DEFAULTS: Required<Omit<Machine, 'node'>> & { node?: string } = {
  uid: 0,
  node: 'v20.20.2',
  npm: true,
  chromium: true,
  vulkan: true,
  apt: true,
  aptNode: '18.20.4+dfsg-1~deb12u3',
};

/** Runs the script on a fake machine; returns its exit status and output. */
function setup(machine: Machine, ...args: string[]): { status: number | null; out: string } {
  const m = { ...DEFAULTS, ...machine };
  const bin = mkdtempSync(join(tmpdir(), 'nextstate-setup-'));
  dirs.push(bin);
  const tool = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool('id', `echo ${m.uid}`);
  if (m.node) tool('node', `echo ${m.node}`);
  // A stand-in that ran would say so: the dry runs below must never reach one.
  const ran = (name: string) => tool(name, `echo "RAN ${name} $*"`);
  if (m.npm) ran('npm');
  if (m.chromium) ran('chromium');
  tool(
    'ldconfig',
    m.vulkan
      ? "printf '\\tlibvulkan.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libvulkan.so.1\\n'"
      : "printf '\\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\\n'",
  );
  if (m.apt) {
    ran('apt-get');
    tool('apt-cache', `printf 'nodejs:\\n  Installed: (none)\\n  Candidate: ${m.aptNode}\\n'`);
  }
  const env = { PATH: bin, HOME: bin };
  const r = spawnSync(bash, [script, ...args], { env, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

const NPM_CI = 'setup: would run: env ONNXRUNTIME_NODE_INSTALL=skip PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci';
const DEV = 'setup: would run: npm run dev';

describe('scripts/setup.sh', () => {
  it('on a machine that has everything: a clean install, then the dev server; no apt-get', () => {
    const { status, out } = setup({}, '--dry-run');
    expect(status).toBe(0);
    expect(out).toContain('setup: Node.js v20.20.2 (needs >= 20.19): ok');
    expect(out).toContain('setup: Vulkan loader libvulkan.so.1: ok');
    expect(out).not.toContain('apt-get');
    expect(out).not.toContain('RAN');
    const lines = out.trim().split('\n');
    expect(lines.indexOf(NPM_CI)).toBeGreaterThan(-1);
    expect(lines.at(-1)).toBe(DEV);
  });

  it('as root, installs what the tests need with apt-get, only what is missing', () => {
    const both = setup({ chromium: false, vulkan: false }, '--dry-run').out;
    expect(both).toContain('setup: Chromium: missing');
    expect(both).toContain('setup: Vulkan loader libvulkan.so.1: missing');
    expect(both).toContain('setup: would run: apt-get update\n');
    expect(both).toContain('setup: would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium libvulkan1\n');
    expect(both.indexOf('apt-get install')).toBeLessThan(both.indexOf(NPM_CI));
    expect(setup({ chromium: false }, '--dry-run').out).toContain('apt-get install -y chromium\n');
    expect(setup({ vulkan: false }, '--dry-run').out).toContain('apt-get install -y libvulkan1\n');
  });

  it('as another user, prints the one line to run and goes on to start the lab', () => {
    const { status, out } = setup({ uid: 1000, chromium: false, vulkan: false }, '--dry-run');
    expect(status).toBe(0);
    expect(out).toContain('setup: the tests need chromium libvulkan1; to install, run: sudo apt-get update && sudo apt-get install -y chromium libvulkan1\n');
    expect(out).not.toContain('would run: apt-get');
    expect(out).not.toContain('would run: env DEBIAN_FRONTEND');
    expect(out).toContain(NPM_CI);
    expect(out.trim().split('\n').at(-1)).toBe(DEV);
  });

  it('without apt-get, says what to install and where to point CHROMIUM_PATH', () => {
    const { out } = setup({ uid: 1000, apt: false, chromium: false }, '--dry-run');
    expect(out).toContain('setup: the tests need chromium (no apt-get here)');
    expect(out).toContain('CHROMIUM_PATH');
  });

  it('--ci sets up without starting the dev server, and stops when the browser cannot be installed', () => {
    const dry = setup({}, '--ci', '--dry-run').out;
    expect(dry).toContain(NPM_CI);
    expect(dry).not.toContain('npm run dev');
    expect(dry.trim().split('\n').at(-1)).toBe('setup: set up; run the tests with: npm test');
    const stopped = setup({ uid: 1000, vulkan: false }, '--ci');
    expect(stopped.status).toBe(1);
    expect(stopped.out).toContain('sudo apt-get install -y libvulkan1');
    expect(stopped.out).not.toContain('RAN');
  });

  it('installs Node.js with apt-get when apt has a new enough one, else prints the NodeSource line and stops', () => {
    const debian13 = setup({ node: undefined, aptNode: '20.19.2+dfsg-1' }, '--dry-run').out;
    expect(debian13).toContain('setup: Node.js none (needs >= 20.19): missing');
    expect(debian13).toContain('setup: would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm\n');

    const debian12 = setup({ uid: 1000, node: 'v18.19.0' });
    expect(debian12.status).toBe(1);
    expect(debian12.out).toContain('setup: Node.js v18.19.0 (needs >= 20.19): missing');
    expect(debian12.out).toContain('https://deb.nodesource.com/setup_22.x');
    expect(debian12.out).not.toContain('RAN');
    expect(setup({ uid: 1000, node: undefined, aptNode: '22.1.0-1' }).out).toContain('to install it, run: sudo apt-get install -y nodejs npm\n');
  });

  it('installs npm when Node.js is there without it', () => {
    expect(setup({ npm: false }, '--dry-run').out).toContain('would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y npm\n');
    const user = setup({ uid: 1000, npm: false });
    expect(user.status).toBe(1);
    expect(user.out).toContain('sudo apt-get install -y npm');
  });

  it('refuses an unknown option', () => {
    const { status, out } = setup({}, '--frobnicate');
    expect(status).toBe(2);
    expect(out).toContain('unknown option --frobnicate');
  });
});

describe('the README Quick start and CI', () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  const commands = [...quickStart.matchAll(/```sh\n([^`]*)```/g)].map((m) => m[1].trim());

  it('gives two commands: the set-up script and npm test', () => {
    expect(commands.slice(0, 2)).toEqual(['bash scripts/setup.sh', 'npm test']);
  });

  it('CI runs the same set-up and exactly the README test command', () => {
    const ci = readFileSync(join(repo, '.ci/run'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ci).toContain('bash scripts/setup.sh --ci');
    expect(ci).toContain(commands[1]);
  });
});
