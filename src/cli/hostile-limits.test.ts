/**
 * The CLI on hostile inputs beyond run files: model-folder files that are devices, FIFOs or
 * endless downloads, oversized inputs, configs asking for runaway work, chat templates that loop,
 * weights that overflow f32, hostile optimizer states, and outputs that would overwrite files or
 * write through links. Each is refused in one line, before the work it guards.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { runCli } from '../../test/support/cli/run-cli';
import { parseModelConfig } from '../models/config';
import { CpuBackend } from '../gpu/cpu/backend';
import { LoraAdapter } from '../gpu/lora';
import { adapterToPeft, PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import { parseSafetensors, tensorToFloat32, writeSafetensors } from '../models/safetensors';
import { exampleConfig } from '../runtime/run-config';

const stories = dataPath('models/stories260K');
const dir = mkdtempSync(join(tmpdir(), 'nextstate-hostile-limits-'));
let n = 0;
const fresh = (name: string) => join(dir, `${name}-${++n}`);

/** A copy of stories260K, with `change` applied to its folder. */
function model(change: (folder: string) => void = () => {}): string {
  const folder = fresh('model');
  cpSync(stories, folder, { recursive: true });
  change(folder);
  return folder;
}

/** Runs the command; expects exit `code` and one line on stderr (two for a usage error), returns the first. */
async function refused(code: number, ...argv: string[]): Promise<string> {
  const r = await runCli(...argv);
  expect(r.code, r.err.join('\n')).toBe(code);
  expect(r.err).toHaveLength(code === 2 ? 2 : 1);
  expect(r.err[0]).not.toMatch(/TypeError|RangeError|at \S+ \(/);
  return r.err[0];
}

const fifo = (path: string) => execFileSync('mkfifo', [path]);
const data = (rows: object[]) => {
  const file = fresh('data.jsonl');
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
  return file;
};
const oneRow = () => data([{ prompt: 'Once upon a time', completion: ' there was a cat.', advantage: 1 }]);

describe('model-folder files that are not files', () => {
  it('config.json as a symlink to /dev/zero or a FIFO: generate, plan and train refuse it at once', async () => {
    for (const make of [(p: string) => symlinkSync('/dev/zero', p), fifo]) {
      const folder = model((f) => {
        execFileSync('rm', [join(f, 'config.json')]);
        make(join(f, 'config.json'));
      });
      const line = `${join(folder, 'config.json')} is not a regular file (a folder, FIFO or device); a model folder holds regular files`;
      expect(await refused(1, 'generate', '--model', folder, '--prompt', 'x')).toContain(line);
      expect(await refused(1, 'plan', '--model', folder)).toContain(line);
      expect(await refused(1, 'train', '--model', folder, '--data', oneRow(), '--out', fresh('out'))).toContain(line);
    }
  }, 30_000);

  it('optimizer.safetensors as a FIFO: train --full --resume refuses it instead of waiting for a writer', async () => {
    const folder = model((f) => fifo(join(f, 'optimizer.safetensors')));
    expect(await refused(1, 'train', '--full', '--resume', '--model', folder, '--data', oneRow(), '--out', fresh('out'))).toContain(
      'optimizer.safetensors is not a regular file',
    );
  }, 30_000);
});

describe("the CLI's own inputs", () => {
  it('--data /dev/zero, run --config /dev/zero and a FIFO --config are refused in one line', async () => {
    expect(await refused(1, 'train', '--model', stories, '--data', '/dev/zero', '--out', fresh('out'))).toBe(
      'nextstate train: /dev/zero is not a regular file (a folder, FIFO or device); name a .jsonl file of {"prompt", "completion", "advantage"} lines, or split it.',
    );
    expect(await refused(1, 'run', '--config', '/dev/zero')).toMatch(/^nextstate run: \/dev\/zero is not a regular file .*; name a JSON run config/);
    const pipe = fresh('run.json');
    fifo(pipe);
    expect(await refused(1, 'run', '--config', pipe)).toMatch(/is not a regular file/);
  });

  it('refuses training data over its cap from its size, before reading a byte', async () => {
    const huge = fresh('huge.jsonl');
    const fd = openSync(huge, 'w');
    ftruncateSync(fd, 300_000_000);
    closeSync(fd);
    const before = process.memoryUsage().rss;
    expect(await refused(1, 'train', '--model', stories, '--data', huge, '--out', fresh('out'))).toBe(
      `nextstate train: ${huge} is 300 MB, more than the 256 MB training data may be; name a .jsonl file of {"prompt", "completion", "advantage"} lines, or split it.`,
    );
    expect(process.memoryUsage().rss - before).toBeLessThan(100_000_000);
  });

  it('refuses a 5 MB prompt from its length, before the tokenizer sees it', async () => {
    const file = data([{ prompt: 'x'.repeat(5_000_000), completion: ' y', advantage: 1 }]);
    // The data's content, not the command line, is at fault: exit 1, as for the file's size above.
    expect(await refused(1, 'train', '--model', stories, '--data', file, '--out', fresh('out'))).toBe(
      "nextstate train: sample 1: prompt brings the text to 5,000,000 characters, more than this model's 512 positions can hold (4,096 characters at most, 8 a token); shorten it or the text before it",
    );
  });

  it('refuses schedule.concurrentSessions of 1e8 before any session exists', async () => {
    const config = exampleConfig('storyteller', stories, 'binary');
    config.schedule.concurrentSessions = 1e8;
    const file = fresh('run.json');
    writeFileSync(file, JSON.stringify(config));
    expect(await refused(1, 'run', '--config', file)).toBe('nextstate run: run config: schedule.concurrentSessions must be a whole number from 1 to 1,024');
  });
});

describe('downloads', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith('/liar/')) {
        // A Content-Length of 1e12 was preallocated ("Invalid typed array length").
        res.writeHead(200, { 'content-length': String(1e12) });
        res.end('{}');
        return;
      }
      // An endless config.json: chunks until the client stops reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      pump();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('an endless config.json from a URL stops at the cap for its kind; a Content-Length of 1e12 is refused unread', async () => {
    expect(await refused(1, 'plan', '--model', `${base}/endless`)).toBe(
      `nextstate plan: ${base}/endless/config.json is more than the 64 MB a model file of its kind may be; it is not a model file of a supported checkpoint.`,
    );
    expect(await refused(1, 'plan', '--model', `${base}/liar`)).toBe(
      `nextstate plan: ${base}/liar/config.json is 1.0 TB, more than the 64 MB a model file of its kind may be; it is not a model file of a supported checkpoint.`,
    );
  }, 30_000);
});

describe('chat templates and numerics', () => {
  it('a chat template looping 100 M times is refused in one line before it builds its list', async () => {
    const folder = model((f) => {
      const config = JSON.parse(readFileSync(join(f, 'tokenizer_config.json'), 'utf8'));
      config.chat_template = '{% for i in range(100000000) %}{{ messages[0].content }}{% endfor %}';
      writeFileSync(join(f, 'tokenizer_config.json'), JSON.stringify(config));
    });
    expect(await refused(1, 'generate', '--model', folder, '--prompt', 'x', '--chat')).toMatch(
      /^nextstate generate: the chat template made a list of more than 1,000,000 entries, far more than rendering a conversation takes/,
    );
  });

  it('tokenizer_class "Tensor" (a class of the library, not a tokenizer) reads as an unknown class, not a TypeError', async () => {
    const folder = model((f) => {
      const config = JSON.parse(readFileSync(join(f, 'tokenizer_config.json'), 'utf8'));
      writeFileSync(join(f, 'tokenizer_config.json'), JSON.stringify({ ...config, tokenizer_class: 'Tensor' }));
    });
    const r = await runCli('generate', '--model', folder, '--prompt', 'Once upon a time', '--max-new-tokens', '2');
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
  });

  it('weights of 3e38: generate and score stop naming the layer instead of exiting 0 with log-probs null', async () => {
    const folder = model((f) => {
      const { tensors, metadata } = parseSafetensors(readFileSync(join(f, 'model.safetensors')));
      const out = [...tensors.values()].map((t) => {
        const data = tensorToFloat32(t);
        if (t.name === 'model.layers.2.mlp.up_proj.weight') data.fill(3e38);
        return { name: t.name, shape: t.shape, data };
      });
      writeFileSync(join(f, 'model.safetensors'), writeSafetensors(out, metadata));
    });
    const where = 'is NaN or infinite: the first NaN or infinite value is in model.layers.2.mlp.up_proj. The weights overflow f32';
    expect(await refused(1, 'generate', '--model', folder, '--prompt', 'Once upon a time', '--json')).toContain(
      `the log-prob of generated token 1 of sequence 1 ${where}`,
    );
    expect(await refused(1, 'score', '--model', folder, '--prompt', 'Once upon a time', '--completion', ' there', '--json')).toContain(where);
  });

  it("an adapter's lora_alpha of 1e38: score stops naming the projection", async () => {
    const config = parseModelConfig(JSON.parse(readFileSync(join(stories, 'config.json'), 'utf8')));
    const be = new CpuBackend();
    const adapter = LoraAdapter.init(be, config, { rank: 4, alpha: 1e38, targets: ['q_proj'] }, 1);
    for (const pair of adapter.pairs.values()) pair.B = be.tensor(new Float32Array(pair.B.shape[0] * pair.B.shape[1]).fill(1000), pair.B.shape);
    const files = await adapterToPeft(be, adapter, stories);
    const folder = fresh('adapter');
    mkdirSync(folder);
    writeFileSync(join(folder, PEFT_WEIGHTS), files[PEFT_WEIGHTS]);
    writeFileSync(join(folder, PEFT_CONFIG), files[PEFT_CONFIG]);
    expect(await refused(1, 'score', '--model', stories, '--adapter', folder, '--prompt', 'Once upon a time', '--completion', ' there')).toMatch(
      /in model\.layers\.0\.self_attn\.q_proj\. The weights or the adapter \(its lora_alpha and weights\) overflow f32/,
    );
  });
});

describe('train --full --resume and what it writes', () => {
  /** A folder train --full wrote, with its optimizer state. */
  let trained = '';
  beforeAll(async () => {
    trained = fresh('full');
    const r = await runCli('train', '--full', '--model', stories, '--data', oneRow(), '--out', trained, '--steps', '1', '--json');
    expect(r.code, r.err.join('\n')).toBe(0);
  }, 60_000);

  /** `trained` with its optimizer state changed by `change`. */
  function withOptimizer(change: (t: { name: string; shape: number[]; data: Float32Array }) => void, metadata?: Record<string, string>): string {
    const folder = fresh('resume');
    cpSync(trained, folder, { recursive: true });
    const file = join(folder, 'optimizer.safetensors');
    const parsed = parseSafetensors(readFileSync(file));
    const out = [...parsed.tensors.values()].map((t) => ({ name: t.name, shape: t.shape, data: tensorToFloat32(t) }));
    out.forEach(change);
    writeFileSync(file, writeSafetensors(out, { ...parsed.metadata, ...metadata }));
    return folder;
  }

  it('refuses negative second moments and a step of 1e20, and writes nothing', async () => {
    const negative = withOptimizer((t) => t.name.endsWith('.exp_avg_sq') && t.data.fill(-1));
    const out = fresh('out');
    expect(await refused(1, 'train', '--full', '--resume', '--model', negative, '--data', oneRow(), '--out', out)).toMatch(
      /^nextstate train: optimizer state: .*exp_avg_sq\[0\] is -1; a second moment is a finite number of at least 0/,
    );
    expect(existsSync(out)).toBe(false);
    const far = withOptimizer(() => {}, { step: '100000000000000000000' });
    expect(await refused(1, 'train', '--full', '--resume', '--model', far, '--data', oneRow(), '--out', out)).toMatch(
      /step 100000000000000000000; the step must be a whole number up to 100,000,000/,
    );
  }, 30_000);

  it('never writes over the --model folder, however it is spelt', async () => {
    const before = readFileSync(join(trained, 'model.safetensors'));
    expect(await refused(2, 'train', '--full', '--resume', '--model', trained, '--data', oneRow(), '--out', `${trained}/./`, '--force')).toBe(
      `nextstate train: --out ${trained}/./ is the --model folder: writing there would replace the weights training starts from; name another folder`,
    );
    // Buffer.equals: a deep comparison of a megabyte costs seconds.
    expect(readFileSync(join(trained, 'model.safetensors')).equals(before)).toBe(true);
  });

  it('refuses, before training, a folder that holds its files (unless --force) or is a symbolic link', async () => {
    const taken = fresh('taken');
    mkdirSync(taken);
    writeFileSync(join(taken, 'model.safetensors'), 'precious');
    expect(await refused(2, 'train', '--full', '--model', stories, '--data', oneRow(), '--out', taken)).toBe(
      `nextstate train: --out ${taken} already holds model.safetensors; pass --force to replace it, or name another folder`,
    );
    expect(readFileSync(join(taken, 'model.safetensors'), 'utf8')).toBe('precious');
    const link = fresh('link');
    symlinkSync(taken, link);
    expect(await refused(2, 'train', '--model', stories, '--data', oneRow(), '--out', link, '--force')).toBe(
      `nextstate train: --out ${link} is a symbolic link; name the folder itself, so that nothing is written where the link points`,
    );
    const r = await runCli('train', '--full', '--model', stories, '--data', oneRow(), '--out', taken, '--steps', '1', '--force');
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(readFileSync(join(taken, 'model.safetensors')).byteLength).toBeGreaterThan(1000);
  }, 60_000);
});

describe('export writes', () => {
  let run = '';
  beforeAll(async () => {
    const config = exampleConfig('storyteller', stories, 'binary');
    config.schedule = { ...config.schedule, steps: 1, evalEvery: 0 };
    const file = fresh('run.json');
    writeFileSync(file, JSON.stringify(config));
    run = fresh('run.nsrun');
    const r = await runCli('run', '--config', file, '--out', run);
    expect(r.code, r.err.join('\n')).toBe(0);
  }, 120_000);

  it('--peft and --records refuse files that are there unless --force, and never write through a link', async () => {
    const peft = fresh('peft');
    expect((await runCli('export', run, '--peft', peft)).code).toBe(0);
    expect(await refused(2, 'export', run, '--peft', peft)).toBe(
      `nextstate export: --peft ${peft} already holds adapter_model.safetensors, adapter_config.json; pass --force to replace them, or name another folder`,
    );
    expect((await runCli('export', run, '--peft', peft, '--force')).code).toBe(0);

    const target = fresh('target.txt');
    writeFileSync(target, 'precious');
    const link = fresh('records.jsonl');
    symlinkSync(target, link);
    expect(await refused(2, 'export', run, '--records', link, '--force')).toBe(
      `nextstate export: --records ${link} is a symbolic link; name the file itself, so that nothing is written where the link points`,
    );
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(readlinkSync(link)).toBe(target);
    expect(await refused(2, 'export', run, '--records', target)).toBe(
      `nextstate export: --records ${target} already exists; pass --force to replace it, or name another file`,
    );
    expect((await runCli('export', run, '--records', target, '--force')).code).toBe(0);
    expect(readFileSync(target, 'utf8')).toMatch(/^\{"version":0,/);
  }, 30_000);
});
