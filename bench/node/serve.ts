/**
 * `--only serve`: `nextstate serve` under concurrent OpenAI clients on 127.0.0.1. Requests per
 * second and p50/p99 latency at 1, 4 and 16 clients, with the generation batcher merging
 * concurrent requests (--max-batch 32) and generating one at a time (--max-batch 1), and the
 * batched/one-at-a-time ratio of requests per second. Side turns, so nothing is judged or trained
 * and the figures are the serving path's alone: HTTP, the template, the batcher, the engine and
 * the journal's fsync per request.
 *
 * Then the time to first token while the trainer thread runs a step, beside the time outside a
 * step, in one run of one server: an agent's corrections keep steps coming while a streaming
 * client probes, and each probe counts where it was sent and answered (stepTtft).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import OpenAI from 'openai';
import { cliIo } from '../../src/cli/io';
import { startServe, type ServeHandle } from '../../src/cli/serve';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { round } from '../lib/stats';

export const SERVE_CLIENTS = [1, 4, 16] as const;

export interface ServeLevel {
  clients: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface TtftLevel {
  requests: number;
  p50Ms: number;
  p99Ms: number;
}

export interface StepTtft {
  /** Tokens of each agent reply the steps train on, and samples per step. */
  trainedTokens: number;
  batchSize: number;
  steps: number;
  stepMsP50: number;
  /** Streamed side turns sent and answered with no step in flight. */
  outside: TtftLevel;
  /** Streamed side turns sent and answered while a step trained on the trainer thread. */
  duringStep: TtftLevel;
  /** duringStep's p50 over outside's. */
  ratio: number;
}

export interface ServeReport {
  /** --quick: fewer requests and tokens. */
  quick: boolean;
  model: string;
  backend: 'cpu';
  maxTokens: number;
  batched: ServeLevel[];
  oneAtATime: ServeLevel[];
  /** batched requests/s over one-at-a-time requests/s, per client count. */
  ratio: Record<string, number>;
  stepTtft: StepTtft;
}

/** The q-th quantile by nearest rank. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function level(client: OpenAI, model: string, clients: number, requests: number, maxTokens: number): Promise<ServeLevel> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (next < requests) {
        const i = next++;
        const t = performance.now();
        await client.chat.completions.create(
          { model, messages: [{ role: 'user', content: `Request ${i}: tell me a story.` }], max_tokens: maxTokens, temperature: 1, seed: i },
          { headers: { 'X-Session-Id': `bench-${clients}-${c}`, 'X-Turn-Type': 'side' } },
        );
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    clients,
    requests,
    requestsPerSecond: round((requests * 1000) / wall),
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
  };
}

/** `nextstate serve` on the model with `args`, in this process, and an OpenAI client of it; `run` gets both, then the server stops. */
async function withServer<T>(modelDir: string, args: string[], run: (handle: ServeHandle, client: OpenAI) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-bench-serve-'));
  const handle = await startServe(
    ['--model', modelDir, '--out', join(dir, 'bench.nsrun'), '--port', '0', ...args],
    cliIo(
      () => {},
      () => {},
    ),
  );
  try {
    return await run(handle, new OpenAI({ baseURL: `${handle.url}/v1`, apiKey: 'unused', maxRetries: 0 }));
  } finally {
    await handle.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function ttftLevel(ms: number[]): TtftLevel {
  const sorted = [...ms].sort((a, b) => a - b);
  return { requests: ms.length, p50Ms: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)) };
}

/**
 * Time to first token during a step and outside one, on one server. An agent talks in sessions
 * of two main turns, the second a correction, so that every session closes a judged turn and
 * steps of `batchSize` samples keep coming, each training on replies of `trainedTokens` tokens.
 * Meanwhile a client streams short side turns one after another; a probe counts as during a step
 * when a step was in flight both when it was sent and when its first text came, as outside when
 * none was at either, and not at all otherwise.
 */
/** Probes at most, so that a run whose steps never overlap a probe ends. */
const MAX_PROBES = 2000;

async function stepTtft(modelDir: string, quick: boolean, log: (line: string) => void): Promise<StepTtft> {
  const want = quick ? 8 : 32;
  const trainedTokens = 64;
  const batchSize = 2;
  return withServer(modelDir, ['--batch-size', String(batchSize), '--max-tokens', String(trainedTokens)], async (handle, client) => {
    const model = basename(modelDir);
    const during: number[] = [];
    const outside: number[] = [];
    let done = false;
    const agent = (async () => {
      for (let s = 0; !done; s++) {
        const headers = { 'X-Session-Id': `agent-${s}`, 'X-Turn-Type': 'main' };
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `Story ${s}: write a long story about a lighthouse keeper.` }];
        const r = await client.chat.completions.create({ model, messages, max_tokens: trainedTokens, seed: s }, { headers });
        messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: 'No, that is wrong. Please redo it.' });
        await client.chat.completions.create({ model, messages, max_tokens: 1, seed: s }, { headers: { ...headers, 'X-Session-Done': 'true' } });
      }
    })();
    for (let i = 0; during.length < want || outside.length < want; i++) {
      if (i === MAX_PROBES)
        throw new Error(
          `${MAX_PROBES} probes found ${during.length} answered during a step and ${outside.length} outside; the steps are too short or too long to measure here`,
        );
      const sentDuring = handle.loop.stepInFlight() !== null;
      const t = performance.now();
      const stream = await client.chat.completions.create(
        { model, messages: [{ role: 'user', content: `Probe ${i}: hello.` }], max_tokens: 4, seed: i, stream: true },
        { headers: { 'X-Session-Id': `probe-${i}`, 'X-Turn-Type': 'side' } },
      );
      let first: number | null = null;
      let firstDuring = false;
      for await (const chunk of stream) {
        if (first === null && chunk.choices[0]?.delta.content) {
          first = performance.now() - t;
          firstDuring = handle.loop.stepInFlight() !== null;
        }
      }
      if (first === null) continue;
      if (sentDuring && firstDuring && during.length < want) during.push(first);
      else if (!sentDuring && !firstDuring && outside.length < want) outside.push(first);
    }
    done = true;
    await agent;
    const steps = handle.runFile.all.flatMap((r) => (r.kind === 'train_step' && r.stats.stepMs !== null ? [r.stats.stepMs] : [])).sort((a, b) => a - b);
    const result = {
      trainedTokens,
      batchSize,
      steps: steps.length,
      stepMsP50: round(quantile(steps, 0.5)),
      outside: ttftLevel(outside),
      duringStep: ttftLevel(during),
      ratio: 0,
    };
    result.ratio = round(result.duringStep.p50Ms / result.outside.p50Ms);
    log(`serve: time to first token ${result.outside.p50Ms} ms outside a step, ${result.duringStep.p50Ms} ms during one (${result.steps} steps)`);
    return result;
  });
}

async function measure(modelDir: string, maxBatch: number, requests: number, maxTokens: number, log: (line: string) => void): Promise<ServeLevel[]> {
  return withServer(modelDir, ['--max-batch', String(maxBatch), '--max-tokens', String(maxTokens)], async (_handle, client) => {
    // One request first, so the first level does not pay for warming up.
    await level(client, basename(modelDir), 1, 1, maxTokens);
    const out: ServeLevel[] = [];
    for (const clients of SERVE_CLIENTS) {
      out.push(await level(client, basename(modelDir), clients, requests, maxTokens));
      log(`serve --max-batch ${maxBatch}, ${clients} clients: ${out.at(-1)!.requestsPerSecond} requests/s`);
    }
    return out;
  });
}

export async function serveSuite(quick: boolean, log: (line: string) => void): Promise<ServeReport> {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const requests = quick ? 16 : 64;
  const maxTokens = quick ? 8 : 32;
  const batched = await measure(dir, 32, requests, maxTokens, log);
  const oneAtATime = await measure(dir, 1, requests, maxTokens, log);
  const ratio = Object.fromEntries(batched.map((b, i) => [String(b.clients), round(b.requestsPerSecond / oneAtATime[i].requestsPerSecond)]));
  return { quick, model: 'tiny-qwen3 (test fixture)', backend: 'cpu', maxTokens, batched, oneAtATime, ratio, stepTtft: await stepTtft(dir, quick, log) };
}
