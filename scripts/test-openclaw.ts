/**
 * `npm run test:openclaw`: a person's day with the real OpenClaw agent and `nextstate serve`, in
 * small, through the recipe's own commands (src/app/lab/openclaw-recipe.ts, which docs/serve.md
 * is made from).
 *
 * Installs openclaw@2026.9.6 and node@24 from npm into .cache/openclaw (about 800 MB, once),
 * starts `nextstate serve` on the tiny Qwen3 fixture (the real tokenizer and chat template,
 * random weights: its answers are noise), writes the provider entry into a temporary HOME's
 * .openclaw/openclaw.json, and talks to it with `openclaw agent --local` in one session:
 *
 * 1. a request, then a correction, which OpenClaw sends behind its timestamp: the judge reads it
 *    without the stamp, the record keeps both texts, and the turn is judged a correction;
 * 2. the turns that fill a batch, then a turn sent once the step trains, answered while it still
 *    does (/healthz says so when the turn has completed, and the old version answered);
 * 3. a turn after the step, answered by the version it made;
 * 4. `kill -9` of the server, the same command with `--resume`, and the session's next turn,
 *    which judges the turn that waited for it.
 *
 * Then the run file and the PEFT export. Not in CI: OpenClaw's ~40 kB system prompt (about 12k
 * tokens) makes each turn tens of seconds on the CPU, and the batch of two is sized so that its
 * step outlasts a turn. `-- --report FILE` writes the measured day, which docs/serve.md quotes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { writeTinyModel } from '../test/fixtures/tiny-model';
import { journalPath, readJournal } from '../src/runtime/run-journal';
import { LoadWatch, machineInfo } from '../bench/node/machine';
import {
  agentArgs,
  dayEntry,
  FIRST_TURNS,
  installCommands,
  OPENCLAW_PACKAGE,
  openClawPath,
  serveArgs,
  type Command,
  type DayReport,
  type OpenClawDay,
} from '../src/app/lab/openclaw-recipe';
import type { InteractionRecord, JudgeResultRecord, RunRecord, TrainStepRecord } from '../src/rl/records';

const root = resolve(import.meta.dirname, '..');
const cache = join(root, '.cache', 'openclaw');
/** The fixture's positions: room for OpenClaw's prompt, which it budgets against the entry's contextWindow. */
const POSITIONS = 32768;
/** Two samples a step: the fewest turns that fill a batch, and a step that outlasts the turn sent during it. */
const BATCH = 2;
const MAX_TOKENS = 16;
const TURN_TIMEOUT_S = 600;
const WAIT_MS = 15 * 60_000;
const SESSION = 'day';

/** The day after the recipe's first two turns. */
const FILLS_BATCH = 'Still not right: make it shorter, three lines only.';
const DURING_STEP = 'Thanks, that is perfect.';
const AFTER_STEP = 'Now write one about the mountains.';
const AFTER_RESUME = 'No, make it about snow on the mountains.';

class CheckFailed extends Error {
  override name = 'CheckFailed';
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new CheckFailed(what);
  console.log(`ok: ${what}`);
}

const withPath = (folders: string[] = []) => ({ ...process.env, PATH: [...folders, process.env.PATH].join(delimiter) });

function installed(): boolean {
  const pkg = join(cache, 'node_modules', 'openclaw', 'package.json');
  const version = existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : null;
  return `openclaw@${version}` === OPENCLAW_PACKAGE && existsSync(join(cache, 'node_modules', 'node', 'bin', 'node'));
}

function install(): void {
  if (installed()) return;
  mkdirSync(cache, { recursive: true });
  for (const { argv, path } of installCommands(cache) satisfies Command[]) {
    console.log(argv.join(' '));
    const r = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', env: withPath(path) });
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (exit ${r.status}); check that the npm registry is reachable`);
  }
}

/** A port free now, so that the resumed server listens where the agent's entry points. */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

interface ServeEvent {
  type: string;
  url?: string;
  waiting?: number;
  step?: number;
}

/** `nextstate serve ARGS --json` as the recipe starts it; resolves once it listens, with its events so far. */
async function serve(args: string[]): Promise<{ child: ChildProcess; exited: Promise<string>; events: ServeEvent[] }> {
  const child = spawn(process.execPath, [join(root, 'bin', 'nextstate.mjs'), ...args, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<string>((r) => child.on('exit', (code, signal) => r(signal ?? String(code))));
  const events: ServeEvent[] = [];
  await new Promise<void>((res, rej) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      console.log(`serve: ${line.slice(0, 300)}`);
      const event = JSON.parse(line) as ServeEvent;
      events.push(event);
      if (event.type === 'listening') res();
    });
    void exited.then((how) => rej(new Error(`nextstate serve exited (${how}) before it listened`)));
  });
  return { child, exited, events };
}

/** One `openclaw agent` turn in the day's session, as the recipe runs it (plus --json, to read its answer). */
function agentTurn(day: OpenClawDay, home: string, message: string): Promise<string> {
  const child = spawn('openclaw', [...agentArgs(SESSION, message), '--json', '--timeout', String(TURN_TIMEOUT_S)], {
    cwd: home,
    env: { ...withPath(openClawPath(day.prefix)), HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('exit', (code) => {
      if (code !== 0) return rej(new Error(`openclaw agent exited with ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
      const result = JSON.parse(out.slice(out.indexOf('{'))) as { meta?: { finalAssistantVisibleText?: string } };
      res(result.meta?.finalAssistantVisibleText ?? '');
    });
  });
}

async function waitFor(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await ok())) {
    if (Date.now() > end) throw new CheckFailed(`timed out after ${WAIT_MS / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Health {
  version: number;
  training: { step: number; servingMeanwhile: boolean } | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { report: { type: 'string' } } });
  const load = new LoadWatch();
  const startedAt = new Date().toISOString();
  install();
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-openclaw-'));
  const home = join(dir, 'home');
  const { dir: model, config } = await writeTinyModel(join(dir, 'tiny-qwen3'), { family: 'qwen3', positions: POSITIONS });
  const day: OpenClawDay = {
    prefix: cache,
    model,
    port: await freePort(),
    out: join(dir, 'day.nsrun'),
    batchSize: BATCH,
    maxTokens: MAX_TOKENS,
    idleTimeout: '30m',
    contextWindow: POSITIONS,
  };
  const records = (): RunRecord[] => (existsSync(journalPath(day.out)) ? readJournal(journalPath(day.out)).records : []);
  const interactions = () => records().filter((r): r is InteractionRecord => r.kind === 'interaction');
  const isJudged =
    (turn: number) =>
    (r: RunRecord): r is JudgeResultRecord =>
      r.kind === 'judge_result' && r.judge === 'binary' && r.turn === turn;
  const judged = (turn: number) => records().find(isJudged(turn));
  const stepDone = (step: number) => records().find((r): r is TrainStepRecord => r.kind === 'train_step' && r.step === step);
  const health = async (): Promise<Health> => (await fetch(`http://127.0.0.1:${day.port}/healthz`)).json() as Promise<Health>;
  const turns: DayReport['turns'] = [];
  const talk = async (message: string): Promise<InteractionRecord> => {
    const started = Date.now();
    const answer = await agentTurn(day, home, message);
    const seconds = Math.round((Date.now() - started) / 1000);
    const asked = interactions().at(-1)!;
    turns.push({ message, seconds, promptTokens: asked.promptIds?.length ?? 0, version: asked.version });
    console.log(`turn ${asked.turn} (${seconds} s, v${asked.version}): ${JSON.stringify(message)} -> ${JSON.stringify(answer).slice(0, 60)}`);
    return asked;
  };

  let server = await serve(serveArgs(day));
  mkdirSync(join(home, '.openclaw'), { recursive: true });
  writeFileSync(join(home, '.openclaw', 'openclaw.json'), dayEntry(day));
  try {
    // 1. A request and its correction, behind OpenClaw's timestamp.
    const [ask, correction] = FIRST_TURNS;
    await talk(ask);
    const corrected = await talk(correction);
    await waitFor(() => judged(1) !== undefined, "turn 1's judgement");
    const first = judged(1)!;
    const userWords = corrected.messages.filter((m) => m.role === 'user').map((m) => m.content);
    check(
      userWords.some((text) => /^\[\w{3} \d{4}-\d{2}-\d{2} \d{2}:\d{2} [^\]]+\] /.test(text) && text.endsWith(correction)),
      `OpenClaw sent the correction behind its timestamp, and the policy's prompt kept it (${JSON.stringify(userWords.find((t) => t.endsWith(correction)))})`,
    );
    check(
      first.nextState !== undefined &&
        first.nextState.raw !== first.nextState.cleaned &&
        first.nextState.raw.endsWith(correction) &&
        first.nextState.cleaned === correction,
      `the judgement keeps the text as sent beside the text the judge read (${JSON.stringify(first.nextState)})`,
    );
    check(first.score === -1, `the correction was judged a correction (turn 1: ${first.score})`);

    // 2. The batch fills; a turn sent once the step trains completes while it still does.
    await talk(FILLS_BATCH);
    await waitFor(async () => (await health()).training?.step === 1, 'step 1 to start');
    const during = await talk(DURING_STEP);
    const meanwhile = await health();
    check(
      meanwhile.training?.step === 1 && meanwhile.training.servingMeanwhile && during.version === 0 && stepDone(1) === undefined,
      `a turn completed while step 1 trained, answered by v${during.version} (/healthz then: ${JSON.stringify(meanwhile.training)})`,
    );

    // 3. After the step, the new version answers.
    await waitFor(() => stepDone(1) !== undefined, 'step 1 to end');
    check(stepDone(1)!.skipped === null, `step 1 trained on ${stepDone(1)!.samples} samples`);
    const after = await talk(AFTER_STEP);
    check(after.version === 1, `the turn after the step was answered by the version it made (v${after.version})`);

    // 4. kill -9, the same command with --resume, and the turn that waited judged by the session's next message.
    server.child.kill('SIGKILL');
    check((await server.exited) === 'SIGKILL', 'nextstate serve was killed (kill -9)');
    check(judged(after.turn) === undefined, `turn ${after.turn} waited for its next state when the server died`);
    server = await serve([...serveArgs(day), '--resume']);
    const resumed = server.events.find((e) => e.type === 'resumed');
    check(resumed?.waiting === 1, `serve --resume took up the turn that waited (${JSON.stringify(resumed)})`);
    const next = await talk(AFTER_RESUME);
    check(next.session === after.session && next.turn === after.turn + 1, `the session went on after the resume (${next.session}, turn ${next.turn})`);
    await waitFor(() => judged(after.turn) !== undefined, `turn ${after.turn}'s judgement`);
    const sofar = records();
    const late = sofar.find(isJudged(after.turn))!;
    check(
      sofar.indexOf(late) > sofar.findIndex((r) => r.kind === 'runtime_event' && r.event === 'run_resumed') &&
        late.nextState?.cleaned === AFTER_RESUME &&
        late.score === -1,
      `turn ${after.turn}, which waited through the crash, was judged by the next message after the resume (${late.score}, ${JSON.stringify(late.nextState?.cleaned)})`,
    );
  } finally {
    server.child.kill('SIGINT');
  }
  check((await server.exited) === '0', 'nextstate serve stopped cleanly on SIGINT');

  const log = records();
  const asked = log.filter((r): r is InteractionRecord => r.kind === 'interaction');
  check(
    new Set(asked.map((r) => r.session)).size === 1 && asked.every((r) => r.turnType === 'main' && (r.tools?.length ?? 0) > 0),
    `every turn was paired into one session without headers, its tools kept (${asked.length} turns, ${asked[0].tools?.length} tools)`,
  );
  const hints = log.filter((r): r is JudgeResultRecord => r.kind === 'judge_result' && r.judge === 'hint' && r.accepted);
  check(
    hints.some((h) => h.hint?.includes('moon') && !h.hint.includes('UTC]')),
    `the correction gave a hint without the timestamp (${JSON.stringify(hints[0]?.hint).slice(0, 100)})`,
  );
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'nextstate.mjs'), ...args], { encoding: 'utf8' });
  const inspected = JSON.parse(cli('inspect', day.out, '--json').stdout) as {
    summary: { records: number };
    integrity: string;
    adapter: { version: number } | null;
  };
  check(inspected.integrity === 'verified' && inspected.summary.records === log.length, `the run file holds every record (${inspected.summary.records})`);
  check((inspected.adapter?.version ?? 0) >= 1, `the run file holds the trained adapter (v${inspected.adapter?.version})`);
  const exported = cli('export', day.out, '--peft', join(dir, 'peft'));
  check(exported.status === 0 && existsSync(join(dir, 'peft', 'adapter_model.safetensors')), 'nextstate export gives the PEFT adapter');

  const durationS = Math.round(process.uptime());
  const { loadAverage1m, contended } = load.stop();
  console.log(`all checks passed in ${durationS} s; the run is in ${day.out}`);
  if (values.report) {
    const { cpuCores, cpuModel, memoryGiB } = machineInfo();
    const report: DayReport = {
      startedAt,
      durationS,
      machine: { cpuCores, cpuModel, memoryGiB, loadAverage1m: loadAverage1m.atStart, contended },
      openclaw: OPENCLAW_PACKAGE,
      batchSize: BATCH,
      maxTokens: MAX_TOKENS,
      positions: POSITIONS,
      model: { hiddenSize: config.hiddenSize, layers: config.numLayers },
      turns,
      steps: log.flatMap((r) =>
        r.kind === 'train_step' && r.stats.stepMs !== null ? [{ step: r.step, samples: r.samples, seconds: Math.round(r.stats.stepMs / 1000) }] : [],
      ),
    };
    writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`the day's figures are in ${values.report}`);
  }
}

main().catch((e) => {
  console.error(`test:openclaw: ${(e as Error).message}`);
  process.exitCode = 1;
});
