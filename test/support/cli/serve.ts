import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import OpenAI from 'openai';
import { cliIo } from '../../../src/cli/io';
import { startServe, type ServeHandle, type TrainerThreadHooks } from '../../../src/cli/serve';
import { tinyModel } from '../../fixtures/tiny-model';

export interface TestServer {
  handle: ServeHandle;
  client: OpenAI;
  /** The served model's name (the fixture folder's). */
  model: string;
  modelDir: string;
  file: string;
  dir: string;
  lines: string[];
}

/** `nextstate serve` on the tiny Qwen3 fixture (or `o.model`), on 127.0.0.1 and a free port, in this process. */
export async function startTestServer(
  args: string[] = [],
  o: { apiKey?: string; file?: string; trainer?: TrainerThreadHooks; model?: string } = {},
): Promise<TestServer> {
  const modelDir = o.model ?? (await tinyModel({ family: 'qwen3' })).dir;
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-serve-'));
  const file = o.file ?? join(dir, 'run.nsrun');
  const lines: string[] = [];
  const handle = await startServe(
    ['--model', modelDir, '--out', file, '--port', '0', '--json', ...(o.apiKey ? ['--api-key', o.apiKey] : []), ...args],
    cliIo(
      (l) => lines.push(l),
      () => {},
    ),
    { trainer: o.trainer },
  );
  const client = new OpenAI({ baseURL: `${handle.url}/v1`, apiKey: o.apiKey ?? 'unused', maxRetries: 0 });
  return { handle, client, model: basename(modelDir), modelDir, file, dir, lines };
}

/** Waits until `ok()` holds, polling; fails after `ms`. */
export async function until(ok: () => boolean, ms = 60_000, what = 'the condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export { spawnServe, type ServeProcess } from './spawn-serve';
