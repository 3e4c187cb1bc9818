/**
 * The package as a user installs it: `npm pack` (whose prepack step compiles the CLI), then the
 * tarball installed into an empty folder, where `npx nextstate` must work with no tsx and no
 * repository beside it.
 *
 * SLOW: packs the repository and installs its dependencies from npm's cache (the registry when
 * the cache lacks one), about a minute or two.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from './data-dir';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const SLOW = 600_000;
/**
 * The installed command's node_modules, without the optional `webgpu` package: the README says
 * about 16 MB; the bound leaves room for its dependencies' releases, far under the 80 MB asked.
 */
const INSTALLED_LIMIT_BYTES = 24_000_000;

/** Bytes of every file under a folder, as `du -sb` counts them (links as themselves, not followed). */
function treeBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? 0 : lstatSync(join(e.parentPath, e.name)).size),
    0,
  );
}

// The demo model another change bundles; until public/models/ has it, the one-step run names a
// committed model with --policy, as a user without the bundled model would.
const bundledDemo = existsSync(join(repo, 'public/models/storyteller-demo/config.json'));

/** The environment of a user's shell: none of the npm script variables this test may run under. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_(lifecycle|package|command|execpath|node_execpath)/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  }
  // onnxruntime-node's postinstall would download CUDA libraries (README, Quick start).
  return { ...env, ONNXRUNTIME_NODE_INSTALL: 'skip' };
}

describe('the packed package, installed into an empty folder (SLOW: npm pack + npm install, a minute or two)', () => {
  let tmp: string;
  let app: string;
  let packed: string[];
  // --no: a missing local command fails instead of fetching some other package of that name.
  const nextstate = (...args: string[]) => run('npx', ['--no', '--', 'nextstate', ...args], { cwd: app, env: userEnv(), maxBuffer: 64 << 20 });

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'nextstate-pack-'));
    app = join(tmp, 'app');
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: repo, env: userEnv(), maxBuffer: 64 << 20 });
    const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    packed = info.files.map((f) => f.path);
    // An empty project, as `npm init -y` makes one. Without the optional `webgpu` package (Dawn,
    // 132 MB), as the README's size is measured: the CPU backend runs everything here.
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', join(tmp, info.filename)], {
      cwd: app,
      env: userEnv(),
      maxBuffer: 64 << 20,
    });
  }, SLOW);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('ships the compiled command, the bundled models and the data, not the TypeScript sources', () => {
    expect(packed).toContain('bin/nextstate.mjs');
    expect(packed).toContain('dist-cli/nextstate.mjs');
    expect(packed).toContain('data/models/stories260K/model.safetensors');
    if (bundledDemo) expect(packed).toContain('public/models/storyteller-demo/config.json');
    expect(packed.filter((p) => p.startsWith('src/'))).toEqual([]);
    // The installed copy has no tsx to fall back on.
    expect(existsSync(join(app, 'node_modules/tsx'))).toBe(false);
    // postpack leaves the repository running its sources, never a stale build.
    expect(existsSync(join(repo, 'dist-cli'))).toBe(false);
  });

  it(`installs in at most ${INSTALLED_LIMIT_BYTES / 1e6} MB of node_modules: no browser library, no inference runtime`, () => {
    for (const browserOnly of ['@huggingface/transformers', 'onnxruntime-node', 'onnxruntime-web', 'sharp', 'dexie', 'comlink', 'uplot', 'webgpu']) {
      expect(existsSync(join(app, 'node_modules', browserOnly)), browserOnly).toBe(false);
    }
    expect(treeBytes(join(app, 'node_modules'))).toBeLessThanOrEqual(INSTALLED_LIMIT_BYTES);
  });

  it('--backend webgpu without the optional package says how to add it', async () => {
    const refused = await nextstate('generate', '--model', dataPath('models/stories260K'), '--prompt', 'Once', '--backend', 'webgpu').then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(refused.trim()).toMatch(/^nextstate generate: the optional 'webgpu' package .* is not installed .*`npm install webgpu`/);
  });

  it('npx nextstate --help lists the commands', async () => {
    const { stdout } = await nextstate('--help');
    expect(stdout).toMatch(/^usage:/);
    for (const cmd of ['generate', 'score', 'train', 'run', 'inspect', 'export', 'reproduce']) expect(stdout).toContain(`nextstate ${cmd} `);
  });

  it('npx nextstate run --example storyteller prints a config on the bundled demo model', async () => {
    const { stdout } = await nextstate('run', '--example', 'storyteller');
    const config = JSON.parse(stdout);
    expect(config.format).toBe('nextstate-run-config');
    expect(config.models.policy.model).toBe('bundled:storyteller-demo');
  });

  it(
    `runs one storyteller step on ${bundledDemo ? 'the bundled demo model' : 'stories260K named with --policy (no bundled demo model yet)'}`,
    async () => {
      const { stdout: config } = await nextstate('run', '--example', 'storyteller');
      writeFileSync(join(app, 'story.json'), config);
      const policy = bundledDemo ? [] : ['--policy', 'stories260K'];
      if (!bundledDemo) {
        // Without the model, the compiled command still looks for it in the installed package.
        const missing = await nextstate('run', '--config', 'story.json', '--steps', '1').then(
          () => '',
          (e: { stderr: string }) => e.stderr,
        );
        expect(missing).toContain(join(app, 'node_modules/next-state-lab/public/models/storyteller-demo'));
        cpSync(dataPath('models/stories260K'), join(app, 'stories260K'), { recursive: true });
      }
      // Not a terminal, so no progress lines: stdout stays empty, the outcome is said on stderr.
      const { stdout, stderr } = await nextstate('run', '--config', 'story.json', '--steps', '1', '--out', 'story.nsrun', ...policy);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^run finished: \d+ records written to story\.nsrun$/m);
      const { stdout: inspected } = await nextstate('inspect', 'story.nsrun');
      expect(inspected).toContain('integrity: hashes match, no accidental damage');
      expect(readFileSync(join(app, 'story.nsrun')).byteLength).toBeGreaterThan(0);
    },
    SLOW,
  );
});
