/**
 * Test data for the storage tests (Node and browser): a small but complete run log, a run
 * config, PEFT files, unique database names and gzip helpers. Not used by the app.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../../../src/gpu/peft';
import { writeSafetensors } from '../../../src/models/safetensors';
import { makePreset, type RunRecord, type TrainStats } from '../../../src/rl';
import type { StoredConfig } from '../../../src/storage/stored-config';

let dbCounter = 0;
/** A fresh database name per test, so tests never see each other's runs. */
export function uniqueDbName(prefix = 'test'): string {
  return `${prefix}-${Date.now()}-${++dbCounter}-${Math.random().toString(36).slice(2)}`;
}

export function testConfig(extra: Record<string, unknown> = {}): StoredConfig {
  return {
    preset: makePreset('combined', { batch: { size: 2 } }),
    modelRefs: { policy: { id: 'test/tiny-qwen3', files: { 'model.safetensors': 'ab'.repeat(32) } } },
    seeds: { sampling: 7, problems: 11 },
    scenario: { name: 'student', maxTurns: 8 },
    ...extra,
  };
}

export function peftFiles(seed = 1, values = 8): PeftFiles {
  const data = Float32Array.from({ length: values }, (_, i) => seed + i / 8);
  return {
    [PEFT_WEIGHTS]: writeSafetensors([{ name: 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', shape: [2, values / 2], data }], {
      format: 'pt',
    }),
    [PEFT_CONFIG]: JSON.stringify({ peft_type: 'LORA', r: 2, lora_alpha: 4, seed }),
  };
}

const stats = (loss: number | null): TrainStats => ({
  loss,
  policyLoss: loss,
  kl: 0,
  clipFracLow: 0,
  clipFracHigh: 0.125,
  entropy: 1.5,
  meanAbsAdv: 0.5,
  gradNorm: 0.25,
  tokens: 5,
  stepMs: 12,
  logpGap: null,
});

/**
 * A session turn: interaction, both judges, the sample. `text` lets tests plant content
 * (HTML, unicode) in every text field.
 */
export function turnRecords(session: string, turn: number, version: number, ts: number, text = 'Two plus two is four.'): RunRecord[] {
  return [
    {
      kind: 'interaction',
      version,
      ts,
      session,
      turn,
      turnType: 'main',
      messages: [
        { role: 'system', content: 'You are a tutor.' },
        { role: 'user', content: `Solve 2+2 ${text}` },
      ],
      response: text,
      tokenIds: [11, 12],
      logprobs: [-0.25, -0.5],
      startedAt: ts,
      finishedAt: ts + 1,
    },
    { kind: 'judge_vote', version, ts, session, turn, judge: 'binary', vote: 0, raw: `\\boxed{1} ${text}`, score: 1, hint: null },
    { kind: 'judge_vote', version, ts, session, turn, judge: 'hint', vote: 0, raw: `\\boxed{1} [HINT_START]${text}[HINT_END]`, score: 1, hint: text },
    { kind: 'judge_result', version, ts, session, turn, judge: 'binary', score: 1, accepted: true, hint: null, teacherLogpCount: 0 },
    { kind: 'judge_result', version, ts, session, turn, judge: 'hint', score: 1, accepted: true, hint: text, teacherLogpCount: 2 },
    {
      kind: 'sample',
      version,
      ts,
      session,
      turn,
      trainable: true,
      promoted: false,
      reward: 1,
      advantages: { tokens: 2, mean: 1.25, min: 1, max: 1.5, meanAbs: 1.25, nonZero: 2 },
      perToken: [1, 1.5],
    },
  ];
}

export function trainStep(step: number, version: number, ts: number, skipped: string | null = null): RunRecord {
  return { kind: 'train_step', version, ts, step, samples: 2, stats: stats(skipped ? null : 0.5 - step / 10), skipped };
}

export function boundary(from: number, ts: number): RunRecord {
  return { kind: 'version_boundary', version: from, ts, from, to: from + 1 };
}

export function evaluation(step: number | undefined, version: number, ts: number, score: number): RunRecord {
  return {
    kind: 'evaluation',
    version,
    ts,
    ...(step === undefined ? {} : { step }),
    name: 'personalization',
    scores: { mean: score, n: 2 },
    perProblem: [
      { id: 'gsm8k-0', score },
      { id: 'gsm8k-1', score: null, detail: 'judge failed' },
    ],
  };
}

/**
 * Two train steps' worth of a run: base evaluation, 2 turns -> step 0 -> v1, 2 turns -> step 1
 * -> v2, evaluation, one more turn (buffered), a session end, a workspace file that turn appended to.
 */
export function sampleRun(text?: string): RunRecord[] {
  let t = 1_000;
  const tick = () => (t += 10);
  return [
    evaluation(undefined, 0, tick(), 0.17),
    ...turnRecords('alice', 1, 0, tick(), text),
    ...turnRecords('bob', 1, 0, tick(), text),
    trainStep(0, 0, tick()),
    boundary(0, tick()),
    ...turnRecords('alice', 2, 1, tick(), text),
    ...turnRecords('bob', 2, 1, tick(), text),
    trainStep(1, 1, tick()),
    boundary(1, tick()),
    evaluation(1, 2, tick(), 0.76),
    ...turnRecords('alice', 3, 2, tick(), text),
    { kind: 'session_end', version: 2, ts: tick(), session: 'bob', reason: 'explicit', turns: 2, mainTurns: 2 },
    {
      kind: 'workspace_file',
      version: 2,
      ts: tick(),
      workspace: 'alice',
      session: 'alice',
      turn: 3,
      path: 'homework/0.txt',
      op: 'append',
      content: `Problem:\n${text ?? 'Q'}\n`,
    },
  ];
}

export async function gzip(text: string | Uint8Array): Promise<Uint8Array> {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function gunzip(bytes: Uint8Array | Blob): Promise<string> {
  const blob = bytes instanceof Blob ? bytes : new Blob([bytes as Uint8Array<ArrayBuffer>]);
  return new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).text();
}

export interface SeenTransaction {
  stores: string[];
  durability: IDBTransactionDurability;
}

/** Records every readwrite transaction opened (its stores and durability) until stop(). */
export function watchTransactions(): { seen: SeenTransaction[]; stop(): void } {
  const proto = IDBDatabase.prototype;
  const real = proto.transaction;
  const seen: SeenTransaction[] = [];
  proto.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
    const tx = real.apply(this, args);
    if (tx.mode === 'readwrite') seen.push({ stores: [...tx.objectStoreNames].sort(), durability: tx.durability });
    return tx;
  } as IDBDatabase['transaction'];
  return { seen, stop: () => void (proto.transaction = real) };
}
