/**
 * `npm run test:openclaw`: the real OpenClaw agent trains a policy by talking to `nextstate serve`.
 *
 * Installs openclaw@2026.9.6 and node@24 (OpenClaw needs Node >= 24.16) from npm into
 * .cache/openclaw (about 800 MB, once), starts `nextstate serve` on the tiny Qwen3 fixture (the
 * real tokenizer and chat template, random weights: its answers are noise), writes the provider
 * entry into a temporary HOME's .openclaw/openclaw.json, and runs several
 * `openclaw agent --local --session-id S --message ...` turns, some of them corrections. Then it
 * checks that the turns were paired into one session without headers (upstream OpenClaw sends
 * none), that the corrections gave hints and samples, that a training step happened, and that the
 * run file holds all of it. Not in CI: OpenClaw's ~40 kB system prompt makes each turn about a
 * minute on the CPU, so the whole check takes several minutes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { tinyModel } from '../test/fixtures/tiny-model';
import { journalPath, readJournal } from '../src/cli/run-journal';
import type { InteractionRecord, JudgeResultRecord, RunRecord } from '../src/rl/records';

const OPENCLAW = '2026.9.6';
const NODE = '24';
const root = resolve(import.meta.dirname, '..');
const cache = join(root, '.cache', 'openclaw');
const nodeBin = join(cache, 'node_modules', 'node', 'bin');
const openclaw = join(cache, 'node_modules', '.bin', 'openclaw');
/** The model's positions in the copy the agent talks to: room for OpenClaw's system prompt and tools. */
const POSITIONS = 32768;
const TURN_TIMEOUT_S = 600;
const STEP_TIMEOUT_MS = 15 * 60_000;
const API_KEY = 'sk-nextstate-openclaw-test';

const TURNS = [
  'Write a haiku about the sea.',
  'No, that is wrong. Please redo it so that it mentions the moon.',
  'Still not right: make it shorter, three lines only.',
  'Thanks, that is perfect.',
];

class CheckFailed extends Error {
  override name = 'CheckFailed';
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new CheckFailed(what);
  console.log(`ok: ${what}`);
}

function installedVersion(): string | null {
  const pkg = join(cache, 'node_modules', 'openclaw', 'package.json');
  return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : null;
}

/** node@24 first: npm runs OpenClaw's install (and OpenClaw itself) with the Node on PATH. */
function install(): void {
  if (installedVersion() === OPENCLAW && existsSync(join(nodeBin, 'node'))) return;
  mkdirSync(cache, { recursive: true });
  const npm = (args: string[], path = process.env.PATH) => {
    console.log(`npm ${args.join(' ')}`);
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', cache, ...args], { stdio: 'inherit', env: { ...process.env, PATH: path } });
    if (r.status !== 0) throw new Error(`npm install ${args.join(' ')} failed (exit ${r.status}); check that the npm registry is reachable`);
  };
  npm([`node@${NODE}`]);
  npm([`openclaw@${OPENCLAW}`], `${nodeBin}${delimiter}${process.env.PATH}`);
}

/** The tiny fixture with more positions: the agent's prompt is ~15k tokens, the fixture has 512. */
async function agentModel(dir: string): Promise<string> {
  const { dir: fixture } = await tinyModel({ family: 'qwen3' });
  const model = join(dir, 'tiny-qwen3');
  cpSync(fixture, model, { recursive: true });
  const config = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8'));
  writeFileSync(join(model, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: POSITIONS }));
  return model;
}

/** `nextstate serve` as a user starts it; resolves with its URL once it listens. */
function serve(model: string, file: string) {
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin', 'nextstate.mjs'),
      'serve',
      '--model',
      model,
      '--served-model-name',
      'tiny',
      '--out',
      file,
      '--port',
      '0',
      '--api-key',
      API_KEY,
      '--batch-size',
      '2',
      '--max-tokens',
      '16',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const url = new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      console.log(`serve: ${line}`);
      const event = JSON.parse(line) as { type: string; url?: string };
      if (event.type === 'listening') res(event.url!);
    });
    void exited.then(() => rej(new Error('nextstate serve exited before it listened')));
  });
  return { child, url, exited };
}

/** The provider entry of README's "Train an agent by talking to it", for this server. */
function writeProvider(home: string, url: string): void {
  mkdirSync(join(home, '.openclaw'), { recursive: true });
  const entry = {
    models: {
      providers: {
        nextstate: {
          baseUrl: url,
          apiKey: API_KEY,
          api: 'openai-completions',
          models: [
            {
              id: 'tiny',
              name: 'tiny Qwen3 (nextstate serve)',
              reasoning: false,
              input: ['text'],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: POSITIONS,
              maxTokens: 16,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: 'nextstate/tiny' } } },
  };
  writeFileSync(join(home, '.openclaw', 'openclaw.json'), JSON.stringify(entry, null, 2));
}

function agentTurn(home: string, session: string, message: string): { finalAssistantVisibleText?: string } {
  const r = spawnSync(openclaw, ['agent', '--local', '--session-id', session, '--message', message, '--json', '--timeout', String(TURN_TIMEOUT_S)], {
    cwd: home,
    env: { ...process.env, HOME: home, PATH: `${nodeBin}${delimiter}${process.env.PATH}` },
    encoding: 'utf8',
    timeout: (TURN_TIMEOUT_S + 60) * 1000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`openclaw agent exited with ${r.status}: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`);
  const json = r.stdout.slice(r.stdout.indexOf('{'));
  return (JSON.parse(json) as { meta?: { finalAssistantVisibleText?: string } }).meta ?? {};
}

async function waitFor(ok: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new CheckFailed(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function main(): Promise<void> {
  install();
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-openclaw-'));
  const home = join(dir, 'home');
  const file = join(dir, 'openclaw.nsrun');
  const model = await agentModel(dir);
  const server = serve(model, file);
  const url = await server.url;
  writeProvider(home, url);
  const records = () => (existsSync(journalPath(file)) ? readJournal(journalPath(file)).records : []);
  try {
    for (const message of TURNS) {
      const started = Date.now();
      const result = agentTurn(home, 'openclaw-test', message);
      console.log(
        `turn (${((Date.now() - started) / 1000).toFixed(0)} s): ${JSON.stringify(message)} -> ${JSON.stringify(result.finalAssistantVisibleText ?? '').slice(0, 80)}`,
      );
    }
    await waitFor(() => records().some((r) => r.kind === 'version_boundary'), STEP_TIMEOUT_MS, 'a training step');
  } finally {
    server.child.kill('SIGINT');
  }
  check((await server.exited) === 0, 'nextstate serve stopped cleanly on SIGINT');

  const log: RunRecord[] = records();
  const asked = log.filter((r): r is InteractionRecord => r.kind === 'interaction');
  const sessions = new Set(asked.map((r) => r.session));
  check(asked.length >= TURNS.length, `every agent turn reached the server (${asked.length} requests)`);
  check(
    sessions.size === 1 && asked.every((r) => r.turnType === 'main'),
    `the turns were paired into one session without headers (${[...sessions].join(', ')})`,
  );
  check(
    asked.every((r) => (r.tools?.length ?? 0) > 0),
    `each request's tools were kept (${asked[0].tools?.length} tools)`,
  );
  const results = log.filter((r): r is JudgeResultRecord => r.kind === 'judge_result');
  const binary = results.filter((r) => r.judge === 'binary').sort((a, b) => a.turn - b.turn);
  check(binary.length >= TURNS.length - 1 && binary[0].score === -1, `the corrections were judged as corrections (${binary.map((r) => r.score).join(', ')})`);
  const hints = results.filter((r) => r.judge === 'hint' && r.accepted).map((r) => r.hint ?? '');
  check(
    hints.some((h) => h.includes('moon')),
    `a correction gave a hint (${JSON.stringify(hints[0]).slice(0, 100)})`,
  );
  check(log.filter((r) => r.kind === 'sample').length >= 2, 'the judged turns became samples');
  check(
    log.some((r) => r.kind === 'train_step' && r.skipped === null),
    'a training step happened',
  );

  const cli = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'nextstate.mjs'), ...args], { encoding: 'utf8' });
  const inspected = JSON.parse(cli('inspect', file, '--json').stdout) as {
    summary: { records: number; steps: number };
    integrity: string;
    adapter: { version: number } | null;
  };
  check(inspected.integrity === 'verified' && inspected.summary.records === log.length, `the run file holds every record (${inspected.summary.records})`);
  check(inspected.summary.steps >= 1 && (inspected.adapter?.version ?? 0) >= 1, `the run file holds the step and its adapter (v${inspected.adapter?.version})`);
  const exported = cli('export', file, '--peft', join(dir, 'peft'));
  check(exported.status === 0 && existsSync(join(dir, 'peft', 'adapter_model.safetensors')), 'nextstate export gives the PEFT adapter');
  console.log(`all checks passed; the run is in ${file}`);
}

main().catch((e) => {
  console.error(`test:openclaw: ${(e as Error).message}`);
  process.exitCode = 1;
});
