/**
 * The CLI on hostile paths and files: FIFOs, devices, huge and empty files, escape sequences
 * in labels and model ids, a pipe closed early, and training data with a BOM or bad UTF-8.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gunzip, gzip, sampleRun, testConfig } from '../../test/support/storage/fixtures';
import { memorySource, runFileStream } from '../storage/runfile';
import { exportCommand } from './export';
import { inspectCommand } from './inspect';
import { cliIo } from './io';
import { terminalField, terminalText } from './terminal';
import { decodeTrainData, parseTrainData } from './train-data';

const bin = resolve(__dirname, '../../bin/nextstate.mjs');
/** A command's data lines into `out`, its notes dropped. */
const quiet = (out: (line: string) => void) => cliIo(out, () => {});
const dir = mkdtempSync(join(tmpdir(), 'nextstate-hostile-cli-'));

async function runFile(label: string, modelId = 'test/tiny-qwen3'): Promise<string> {
  const config = testConfig({ modelRefs: { policy: { id: modelId } } });
  const source = memorySource({ config, label, notes: '', created: 1_000, status: 'finished' }, sampleRun());
  const bytes = new Uint8Array(await new Response(runFileStream(source)).arrayBuffer());
  const path = join(dir, `run-${Math.random().toString(36).slice(2)}.nsrun`);
  writeFileSync(path, bytes);
  return path;
}

async function failure(command: Promise<void>): Promise<Error> {
  const err = await command.then(
    () => null,
    (e: Error) => e,
  );
  expect(err, 'expected the command to fail').toBeInstanceOf(Error);
  return err!;
}

const commands = {
  inspect: (file: string) =>
    inspectCommand(
      [file],
      quiet(() => {}),
    ),
  export: (file: string) =>
    exportCommand(
      [file, '--records', join(dir, 'records.jsonl')],
      quiet(() => {}),
    ),
};

describe.each(Object.entries(commands))('%s on paths that are not run files', (_name, command) => {
  it('refuses a FIFO at once instead of waiting for a writer forever', async () => {
    const fifo = join(dir, `fifo-${Math.random().toString(36).slice(2)}`);
    execFileSync('mkfifo', [fifo]);
    const err = await failure(command(fifo));
    expect(err.message).toBe(`${fifo} is not a regular file (a folder, FIFO or device); name a .nsrun file exported from the lab.`);
  }, 5_000);

  it('refuses a device and a folder', async () => {
    expect((await failure(command('/dev/zero'))).message).toMatch(/^\/dev\/zero is not a regular file/);
    expect((await failure(command(dir))).message).toMatch(/is not a regular file/);
    expect((await failure(command(join(dir, 'missing.nsrun')))).message).toMatch(/^cannot open .*missing\.nsrun \(ENOENT\); name a \.nsrun file/);
  }, 5_000);

  it('refuses a file over the limit from its size, before reading a byte', async () => {
    // Sparse: 1.5 GB on paper, nothing on disk; reading it whole would cost 1.5 GB of memory.
    const huge = join(dir, `huge-${Math.random().toString(36).slice(2)}.nsrun`);
    const fd = openSync(huge, 'w');
    ftruncateSync(fd, 1_500_000_000);
    closeSync(fd);
    const before = process.memoryUsage().rss;
    const err = await failure(command(huge));
    expect(err.message).toBe(
      'This run file is larger than the import limit of 200 MB (1.5 GB). If you trust it, raise the limit (maxBytes) and import it again.',
    );
    expect(process.memoryUsage().rss - before).toBeLessThan(100_000_000);
  }, 5_000);

  it('calls an empty file empty, not truncated', async () => {
    const empty = join(dir, 'empty.nsrun');
    writeFileSync(empty, '');
    expect((await failure(command(empty))).message).toBe('This file is empty (0 bytes), not a run file. Choose the .nsrun file exported from the lab.');
  });
});

describe('inspect prints text from the file with its control characters escaped', () => {
  const label = 'ok\u001b[2J\u001b[H\r\nforged: run "x" (finished)\u009b31m\u202ereversed';
  // A hub-style id: a local path would leave as its last segment (run files name folders).
  const model = 'models/\u001b]0;title\u0007qwen';

  it('in the plain output: no escape reaches the terminal and no line is forged', async () => {
    const file = await runFile(label, model);
    const out: string[] = [];
    await inspectCommand(
      [file],
      quiet((l) => out.push(l)),
    );
    expect(out).toHaveLength(6);
    for (const line of out) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(out[1]).toBe(
      'run "ok\\u001b[2J\\u001b[H\\u000d\\u000aforged: run "x" (finished)\\u009b31m\\u202ereversed" (finished), created 1970-01-01T00:00:01.000Z',
    );
    expect(out[2]).toBe('  policy: models/\\u001b]0;title\\u0007qwen');
    expect(out[3]).toMatch(/; integrity: hashes match, no accidental damage \(the SHA-256 of the header and of every line after it match; not a signature\)$/);
    expect(out[4]).toBe('sessions: 2 begun, 1 ended; never ended (no session_end logged): alice');
  });

  it('says when a file carries no integrity hashes (an older app wrote it)', async () => {
    const file = await runFile('old');
    const [header, ...body] = (await gunzip(readFileSync(file))).split('\n');
    const { integrity: _integrity, ...old } = JSON.parse(header);
    writeFileSync(file, await gzip([JSON.stringify(old), ...body].join('\n')));
    const out: string[] = [];
    await inspectCommand(
      [file],
      quiet((l) => out.push(l)),
    );
    expect(out[3]).toMatch(/; integrity: UNVERIFIED \(the file carries no hashes, as files from before they existed; damage to it cannot be detected\)$/);
    const json: string[] = [];
    await inspectCommand(
      [file, '--json'],
      quiet((l) => json.push(l)),
    );
    expect(JSON.parse(json[0]).integrity).toBe('unverified');
  });

  it('in --json: still valid JSON holding the same text', async () => {
    const file = await runFile(label, model);
    const out: string[] = [];
    await inspectCommand(
      [file, '--json'],
      quiet((l) => out.push(l)),
    );
    expect(out[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    const parsed = JSON.parse(out[0]);
    expect(parsed.header.run.label).toBe(label);
    expect(parsed.header.models.policy.id).toBe(model);
  });

  it('terminalText keeps newlines and tabs of whole output; terminalField escapes them too', () => {
    expect(terminalText('a\tb\nc\u001b[31m\rd\u0085')).toBe('a\tb\nc\\u001b[31m\\u000dd\\u0085');
    expect(terminalField('a\tb\nc')).toBe('a\\u0009b\\u000ac');
    expect(terminalField('plain – ünïcode 🎉')).toBe('plain – ünïcode 🎉');
  });
});

/** Runs the real bin; returns its exit code and stderr. `closeStdout` closes the pipe at once. */
function bin_(args: string[], closeStdout = false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    if (closeStdout) child.stdout.destroy();
    else child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('the nextstate bin', () => {
  it('ends quietly when its reader closes the pipe early (inspect | head -1)', async () => {
    const file = await runFile('piped');
    for (const args of [['--help'], ['inspect', file]]) {
      const r = await bin_(args, true);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  }, 60_000);

  it('escapes control characters in messages that quote a file', async () => {
    const model = join(dir, 'evil-model');
    mkdirSync(model, { recursive: true });
    writeFileSync(join(model, 'config.json'), JSON.stringify({ architectures: ['Evil\u001b[2J\u001b]0;pwned\u0007'] }));
    const r = await bin_(['generate', '--model', model, '--prompt', 'x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/names architecture Evil\\u001b\[2J\\u001b\]0;pwned\\u0007;/);
    expect(r.stderr).not.toMatch(/\u001b/);
  }, 60_000);
});

describe('train --data', () => {
  const rows = [{ prompt: 'p', completion: ' c', advantage: 1 }].map((r) => JSON.stringify(r)).join('\n');

  it('reads a file that starts with a UTF-8 byte-order mark', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(rows)]);
    expect(parseTrainData(decodeTrainData(bytes, 'data.jsonl'), 'data.jsonl')).toEqual([{ prompt: 'p', completion: ' c', advantage: 1 }]);
    expect(parseTrainData(`\uFEFF${rows}`, 'data.jsonl')).toHaveLength(1);
  });

  it('refuses invalid UTF-8, naming the line, instead of training on U+FFFD', () => {
    const bad = new Uint8Array([
      ...new TextEncoder().encode(`${rows}\n{"prompt": "caf`),
      0xe9,
      ...new TextEncoder().encode('", "completion": "x", "advantage": 1}'),
    ]);
    expect(() => decodeTrainData(bad, 'data.jsonl')).toThrow('data.jsonl:2: not valid UTF-8 text; save the file as UTF-8');
  });
});
