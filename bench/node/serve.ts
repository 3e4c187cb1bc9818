/**
 * `--only serve`: `nextstate serve` under concurrent OpenAI clients on 127.0.0.1. Requests per
 * second and p50/p99 latency at 1, 4 and 16 clients, with the generation batcher merging
 * concurrent requests (--max-batch 32) and generating one at a time (--max-batch 1), and the
 * batched/one-at-a-time ratio of requests per second. Side turns, so nothing is judged or trained
 * and the figures are the serving path's alone: HTTP, the template, the batcher, the engine and
 * the journal's fsync per request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import OpenAI from 'openai';
import { cliIo } from '../../src/cli/io';
import { startServe } from '../../src/cli/serve';
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

async function measure(modelDir: string, maxBatch: number, requests: number, maxTokens: number, log: (line: string) => void): Promise<ServeLevel[]> {
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-bench-serve-'));
  const handle = await startServe(
    ['--model', modelDir, '--out', join(dir, 'bench.nsrun'), '--port', '0', '--max-batch', String(maxBatch), '--max-tokens', String(maxTokens)],
    cliIo(
      () => {},
      () => {},
    ),
  );
  try {
    const client = new OpenAI({ baseURL: `${handle.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    // One request first, so the first level does not pay for warming up.
    await level(client, basename(modelDir), 1, 1, maxTokens);
    const out: ServeLevel[] = [];
    for (const clients of SERVE_CLIENTS) {
      out.push(await level(client, basename(modelDir), clients, requests, maxTokens));
      log(`serve --max-batch ${maxBatch}, ${clients} clients: ${out.at(-1)!.requestsPerSecond} requests/s`);
    }
    return out;
  } finally {
    await handle.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function serveSuite(quick: boolean, log: (line: string) => void): Promise<ServeReport> {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const requests = quick ? 16 : 64;
  const maxTokens = quick ? 8 : 32;
  const batched = await measure(dir, 32, requests, maxTokens, log);
  const oneAtATime = await measure(dir, 1, requests, maxTokens, log);
  const ratio = Object.fromEntries(batched.map((b, i) => [String(b.clients), round(b.requestsPerSecond / oneAtATime[i].requestsPerSecond)]));
  return { quick, model: 'tiny-qwen3 (test fixture)', backend: 'cpu', maxTokens, batched, oneAtATime, ratio };
}
