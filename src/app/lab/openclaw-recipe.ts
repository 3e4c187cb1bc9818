/**
 * The OpenClaw recipe: the commands a person runs to have the real OpenClaw agent train a policy
 * by talking to `nextstate serve`, and the text docs/serve.md shows them in. `npm run
 * test:openclaw` lives its day through these same functions (the install, the server's command,
 * the provider entry, the agent's turns, the resume), so the page says what the test ran, and
 * scripts/openclaw-recipe.ts writes the page's section from them and from the test's measured day.
 */
import { shellWord } from '../../base/shell-word';
import { openClawEntry, servedModelId } from './openclaw-entry';

/** The OpenClaw release the recipe and the test pin. */
export const OPENCLAW_PACKAGE = 'openclaw@2026.9.6';
/** OpenClaw needs Node >= 24.16; this npm package brings such a binary (node_modules/node/bin/node). */
export const NODE_PACKAGE = 'node@24';

/** One person's setup: where OpenClaw goes, and how the server is started. */
export interface OpenClawDay {
  /** Where npm installs Node and OpenClaw (`npm install --prefix`). */
  prefix: string;
  /** `--model`: a folder or a hub id. */
  model: string;
  port: number;
  /** `--out`: the run file. */
  out: string;
  batchSize: number;
  maxTokens: number;
  /** `--idle-timeout`: a duration (30m, 2h) or off. */
  idleTimeout: string;
  /** The tokens OpenClaw may budget its prompt and reply against: the model's positions at most. */
  contextWindow: number;
}

/** A command as argv, run with `path` (folders) in front of PATH where given. */
export interface Command {
  argv: string[];
  path?: string[];
}

/** The two turns the recipe shows: a request, and the correction that makes its turn a training sample. */
export const FIRST_TURNS = ['Write a haiku about the sea.', 'No, that is wrong. Please redo it so that it mentions the moon.'] as const;

const nodeBin = (prefix: string) => `${prefix}/node_modules/node/bin`;

/** The folders to put in front of PATH to run `openclaw`: its own and the Node it needs. */
export function openClawPath(prefix: string): string[] {
  return [`${prefix}/node_modules/.bin`, nodeBin(prefix)];
}

/** node@24 first: npm runs OpenClaw's install scripts with the Node on PATH. */
export function installCommands(prefix: string): Command[] {
  return [
    { argv: ['npm', 'install', '--prefix', prefix, NODE_PACKAGE] },
    { argv: ['npm', 'install', '--prefix', prefix, OPENCLAW_PACKAGE], path: [nodeBin(prefix)] },
  ];
}

/** `nextstate serve`'s arguments for the day; `--resume` after them continues it after a crash. */
export function serveArgs(day: OpenClawDay): string[] {
  return [
    'serve',
    '--model',
    day.model,
    '--port',
    String(day.port),
    '--out',
    day.out,
    '--method',
    'combined',
    '--judge',
    'rules',
    '--batch-size',
    String(day.batchSize),
    '--max-tokens',
    String(day.maxTokens),
    '--idle-timeout',
    day.idleTimeout,
  ];
}

/** One turn of the agent in session `session`, run by OpenClaw itself (no gateway). */
export function agentArgs(session: string, message: string): string[] {
  return ['agent', '--local', '--session-id', session, '--message', message];
}

/** The provider entry for the day's server, on 127.0.0.1, where it takes no key. */
export function dayEntry(day: OpenClawDay): string {
  return openClawEntry({
    server: `http://127.0.0.1:${day.port}`,
    modelId: servedModelId(day.model),
    maxTokens: day.maxTokens,
    contextWindow: day.contextWindow,
  });
}

/** What `npm run test:openclaw -- --report FILE` measured: the figures the recipe quotes. */
export interface DayReport {
  startedAt: string;
  /** The whole command, the install check and the fixture included. */
  durationS: number;
  machine: { cpuCores: number; cpuModel: string; memoryGiB: number; loadAverage1m: number; contended: boolean };
  openclaw: string;
  batchSize: number;
  maxTokens: number;
  positions: number;
  /** The fixture's shape, which the step's cost is quoted with. */
  model: { hiddenSize: number; layers: number };
  /** Each agent turn: its wall-clock seconds (OpenClaw's own work and the server's), prompt tokens and the version that answered. */
  turns: { message: string; seconds: number; promptTokens: number; version: number }[];
  steps: { step: number; samples: number; seconds: number }[];
}

export function shellLine(c: Command): string {
  return `${c.path ? `PATH=${c.path.join(':')}:$PATH ` : ''}${c.argv.map(shellWord).join(' ')}`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, to = 1) => (Math.round(x / to) * to).toLocaleString('en-US');

/** docs/serve.md's recipe for `day`, with the figures of the test's measured day `r`. */
export function openClawRecipe(day: OpenClawDay, r: DayReport): string {
  const served = servedModelId(day.model);
  const serve = shellLine({ argv: ['npx', 'nextstate', ...serveArgs(day)] });
  const tokens = median(r.turns.map((t) => t.promptTokens));
  const [ask, correction] = FIRST_TURNS;
  const m = r.machine;
  const stepS = median(r.steps.map((s) => s.seconds));
  const turnS = median(r.turns.map((t) => t.seconds));
  return [
    `**1. Install OpenClaw.** ${OPENCLAW_PACKAGE.replace('@', ' ')} needs Node ≥ 24.16, which the \`${NODE_PACKAGE}\` npm package brings; both go into one folder (about 800 MB):`,
    '',
    '```sh',
    ...installCommands(day.prefix).map(shellLine),
    `export PATH=${openClawPath(day.prefix).join(':')}:$PATH`,
    '```',
    '',
    '**2. Start the server** (in a terminal of its own; it listens on 127.0.0.1):',
    '',
    '```sh',
    serve,
    '```',
    '',
    `\`--batch-size ${day.batchSize}\`: a step trains on every ${day.batchSize} judged turns (the paper's 16 suits simulated users, not a person typing). ` +
      `Each sample is one of OpenClaw's requests whole, about ${round(tokens, 1000)} tokens of system prompt and tools, so a step trains forward and ` +
      `backward on about ${round(day.batchSize * tokens, 1000)} tokens, whatever the replies' length. On a CPU that is the cost of a step: ` +
      `on ${m.cpuCores} cores (${m.cpuModel}), even the test's tiny model (hidden size ${r.model.hiddenSize}, ${r.model.layers} layers) took ${round(stepS)} s for a step of ` +
      `${r.batchSize} samples, against ${round(turnS)} s for a whole turn; a real model's layers are far wider and deeper, and its step ` +
      `takes many times longer (\`npx nextstate plan --model ${day.model} --train ${day.batchSize}x${tokens}\` says the memory it needs). ` +
      'Steps train on a thread of their own while the agent is answered.',
    '',
    `\`--idle-timeout ${day.idleTimeout}\`: a session silent that long ends, and the turn that waited for your next message is recorded ` +
      'unjudged (the default is 30m; `off` never ends one). Give it more than your longest pause in a conversation.',
    '',
    '**3. Point OpenClaw at it.** In `~/.openclaw/openclaw.json` (merge it into yours, if you have one):',
    '',
    '```json',
    dayEntry(day),
    '```',
    '',
    '- `apiKey`: on 127.0.0.1 the server takes no key, but OpenClaw wants one, so any text does, as `KEY` here. A server started with `--api-key-file` wants that key.',
    `- \`id\` must be the name the server answers to, \`${served}\` here: the last part of \`--model\`, or its \`--served-model-name\`. ` +
      `Another name gets 404. \`primary\` names the provider and that id.`,
    `- \`maxTokens\` is the server's \`--max-tokens\`; \`contextWindow\` the tokens OpenClaw fits its prompt and the reply into, at most the model's positions.`,
    '',
    '**4. Talk to it**, and correct it in the next message of the same session:',
    '',
    '```sh',
    ...[ask, correction].map((message) => shellLine({ argv: ['openclaw', ...agentArgs('me', message)] })),
    '```',
    '',
    'OpenClaw sends the correction as `[Mon 2026-12-07 10:13 UTC] No, that is wrong. …`; the judge reads it without the timestamp, calls the ' +
      'first turn a correction, and its `judge_result` keeps both texts (`nextState.raw`, `nextState.cleaned`). `npx nextstate inspect ' +
      `${day.out}\` shows the run as it grows.`,
    '',
    '**5. After a crash** (even `kill -9`), start it again with the same command and `--resume`:',
    '',
    '```sh',
    `${serve} --resume`,
    '```',
    '',
    'What survives: every record committed before the crash (each is journaled before its reply goes out), the adapter of the last step ' +
      'and its version, the samples that waited for a step (a step cut off trains again, from a fresh optimizer), every judged ' +
      "turn's sample (a turn's judgement and its sample are committed together; one whose sample a crash still cut off is rebuilt " +
      "from its judge's records and buffered once), and each " +
      "session's turn that waited for your next message: OpenClaw's next turn in that session is paired with it as before, and judges it.",
    '',
    `\`npm run test:openclaw\` lives this day with these commands, on the tiny Qwen3 fixture (the real tokenizer and chat template, random ` +
      `weights, ${r.positions} positions) and \`--batch-size ${r.batchSize} --max-tokens ${r.maxTokens}\`: ${r.turns.length} turns of ` +
      `${r.openclaw}, a correction among them, one answered while a step trained and one by the version that step made, a \`kill -9\` and a ` +
      `\`--resume\` whose next turn judges the turn that waited. It took ${round(r.durationS)} s on ${r.startedAt.slice(0, 10)} (${m.cpuCores} cores, ` +
      `${m.memoryGiB} GiB, load average ${m.loadAverage1m} at the start${m.contended ? ', other processes competing' : ''}), the install excepted.`,
    '',
    'Made by `npm run test:openclaw -- --report docs/bench/openclaw.json` and `node --import tsx scripts/openclaw-recipe.ts`.',
  ].join('\n');
}

/** The day docs/serve.md shows: Qwen3-0.6B from the hub on the reference's port. */
export const README_DAY: OpenClawDay = {
  prefix: '$HOME/openclaw',
  model: 'Qwen/Qwen3-0.6B',
  port: 30000,
  out: 'agent.nsrun',
  batchSize: 4,
  maxTokens: 1024,
  idleTimeout: '2h',
  contextWindow: 32768,
};
