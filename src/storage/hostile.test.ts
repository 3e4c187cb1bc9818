/**
 * Run files from strangers: every broken or malicious file is refused with a RunFileError
 * that says what is wrong (and where), and leaves nothing in the database.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gunzip, gzip, peftFiles, sampleRun, testConfig, uniqueDbName } from '../../test/support/storage/fixtures';
import { importRun, inspectRunFile } from './import';
import { adapterLineLimit } from './reader';
import { exportRun, headerDigest } from './runfile';
import { Sha256 } from '../gpu/sha256';
import { RunStore } from './store';
import { RunFileError } from './errors';
import type { ImportOptions } from './import';
import type { ByteInput } from './streams';

const stores: RunStore[] = [];
function newStore(): RunStore {
  const store = new RunStore({ name: uniqueDbName('hostile') });
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

/** The lines of a genuine export, for tests to damage. */
async function genuineLines(includeAdapter = false): Promise<string[]> {
  const store = newStore();
  const id = await store.createRun(testConfig(), 'genuine');
  await store.appendMany(id, sampleRun());
  await store.saveAdapter(id, 2, peftFiles());
  const text = await gunzip(await exportRun(store, id, { includeAdapter }));
  return text.split('\n').slice(0, -1);
}

const fileOf = (lines: string[]) => gzip(lines.join('\n') + '\n');

/**
 * Hashes edited lines again, as anyone editing a file can: the hashes catch damage, and what
 * a hostile file holds is stopped by the content checks, which these files must still pass.
 */
function resealed([header, ...body]: string[]): string[] {
  const bodyHash = new Sha256();
  for (const line of body) bodyHash.updateText(line + '\n');
  const integrity = JSON.stringify({ algorithm: 'sha-256', header: headerDigest(JSON.parse(header)), body: bodyHash.hex() });
  return [header.replace(/"integrity":\{[^}]*\}/, `"integrity":${integrity}`), ...body];
}

/** Imports into a fresh store; returns the error and checks nothing was left behind. */
async function refused(input: ByteInput | Promise<ByteInput>, options?: ImportOptions): Promise<RunFileError> {
  const store = newStore();
  const err = await importRun(store, await input, options).catch((e) => e);
  expect(err, `expected a RunFileError, got ${err}`).toBeInstanceOf(RunFileError);
  expect(await store.db.runs.count()).toBe(0);
  expect(await store.db.records.count()).toBe(0);
  expect(await store.db.metrics.count()).toBe(0);
  expect(await store.db.adapters.count()).toBe(0);
  return err as RunFileError;
}

describe('hostile run files', () => {
  it('truncated gzip', async () => {
    const good = await fileOf(await genuineLines(true));
    for (const cut of [good.length - 4, Math.floor(good.length / 2), 12]) {
      const err = await refused(good.subarray(0, cut));
      expect(err.message).toMatch(/truncated or damaged \(gzip: .+\)\. It was probably cut off/);
    }
  });

  it('a file from a newer format version', async () => {
    const [header, ...rest] = await genuineLines();
    const newer = { ...JSON.parse(header), formatVersion: 2, appVersion: '9.0.0' };
    const err = await refused(fileOf([JSON.stringify(newer), ...rest]));
    expect(err.message).toBe(
      `This run file was made by a newer Next-State Lab (run file format 2, app 9.0.0); this app (${(await import('./runfile')).APP_VERSION}) reads format 1. Update Next-State Lab to open it.`,
    );
    expect([err.line, err.field]).toEqual([1, 'formatVersion']);
  });

  it('something that is not a run file', async () => {
    expect((await refused(gzip('{"hello": "world"}\n'))).message).toMatch(
      /^This is not a Next-State Lab run file: its first line has no "format": "nextstate-run"/,
    );
    expect((await refused(new TextEncoder().encode('{"format": "nextstate-run"}\n'))).message).toMatch(/plain JSON, not a run file/);
    expect((await refused(new TextEncoder().encode('PK\u0003\u0004 a zip'))).message).toMatch(/not gzip-compressed/);
    expect((await refused(gzip(''))).message).toBe('This run file is empty.');
    expect((await refused(gzip('\u0000\u0001not json'))).message).toMatch(/^Run file line 1 is not valid JSON/);
    expect((await refused(gzip(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a])))).message).toMatch(/not valid UTF-8/);
  });

  it('a file of no bytes at all is called empty, not truncated', async () => {
    const message = 'This file is empty (0 bytes), not a run file. Choose the .nsrun file exported from the lab.';
    expect((await refused(new Uint8Array(0))).message).toBe(message);
    expect((await refused(new Blob([]))).message).toBe(message);
    expect((await refused(new Blob([]).stream())).message).toBe(message);
  });

  it('a 10 MB single line is rejected by the per-line limit, with its line number', async () => {
    const [header, first, ...rest] = await genuineLines();
    const huge = JSON.stringify({ ...JSON.parse(first), kind: 'interaction', response: 'x'.repeat(10_000_000) });
    const err = await refused(fileOf([header, first, huge, ...rest]));
    expect(err.line).toBe(3);
    expect(err.message).toBe('Run file line 3 is longer than the limit of 4,000,000 characters for one line; the file is damaged or not a run file.');
    // The limit is an option.
    const small = await refused(fileOf([header, first, ...rest]), { maxLineChars: 100 });
    expect(small.line).toBe(1);
  });

  it('an invalid record at line N names the line and the field', async () => {
    const lines = await genuineLines();
    const n = 7; // 1-based: line 7 is the 6th record
    const record = JSON.parse(lines[n - 1]);
    lines[n - 1] = JSON.stringify({ ...record, turn: -1 });
    const err = await refused(fileOf(lines));
    expect([err.line, err.field]).toEqual([7, 'turn']);
    expect(err.message).toMatch(/^Run file line 7: record field "turn" must be an integer in \[1, \d+\], got -1\. The file is damaged or was edited/);

    lines[n - 1] = JSON.stringify({ ...record, kind: 'telemetry' });
    expect((await refused(fileOf(lines))).field).toBe('kind');
    lines[n - 1] = JSON.stringify({ ...record, extra: 1 });
    expect((await refused(fileOf(lines))).message).toMatch(/field "extra" is not a known field/);
    lines[n - 1] = '{"kind": "interaction",';
    expect((await refused(fileOf(lines))).message).toMatch(/^Run file line 7 is not valid JSON/);
    lines[n - 1] = '';
    expect((await refused(fileOf(lines))).message).toBe('Run file line 7 is empty; the file is damaged.');
  });

  it('fails even on the very last record, after earlier batches were written (nothing left behind)', async () => {
    const lines = await genuineLines();
    lines[lines.length - 1] = JSON.stringify({ ...JSON.parse(lines.at(-1)!), version: -3 });
    const err = await refused(fileOf(lines), { batchRecords: 2 });
    expect(err.line).toBe(lines.length);
  });

  it('a gzip bomb stops inflating at the decompressed-size limit', async () => {
    // Valid records, many times over: about 60 MB decompressed from well under 1 MB.
    const [header, ...records] = await genuineLines();
    const body = records.join('\n') + '\n';
    const chunk = new TextEncoder().encode(body.repeat(Math.ceil(1_000_000 / body.length)));
    const compressed = await gzipRepeated(new TextEncoder().encode(header + '\n'), chunk, 60);
    expect(compressed.length).toBeLessThan(1_000_000);
    const inflated = countInflated();
    const err = await refused(compressed, { maxBytes: 5_000_000 });
    expect(err.message).toBe(
      'This run file is larger than the import limit of 5.0 MB (more than that once decompressed). If you trust it, raise the limit (maxBytes) and import it again.',
    );
    expect(inflated()).toBeGreaterThan(5_000_000);
    expect(inflated()).toBeLessThan(5_000_000 + 1_000_000);
  });

  it('a gzip bomb in the one long line a file may have (the adapter) stops at the default 200 MB', async () => {
    const [header, ...records] = (await genuineLines(true)).slice(0, -1);
    // A header promising an adapter larger than the limit, so that only the limit stops it.
    const promising = JSON.stringify({ ...JSON.parse(header), adapter: { version: 2, bytes: 300_000_000 } });
    const start = new TextEncoder().encode([promising, ...records, '{"adapter":{"version":2,"config":"{}","safetensorsBase64":"'].join('\n'));
    const compressed = await gzipRepeated(start, new Uint8Array(1_000_000).fill(65), 300);
    expect(compressed.length).toBeLessThan(2_000_000);
    const inflated = countInflated();
    const err = await refused(compressed);
    expect(err.message).toMatch(/larger than the import limit of 200 MB \(more than that once decompressed\)/);
    expect(inflated()).toBeLessThan(200_000_000 + 1_000_000);
  });

  it('a compressed file over the limit is refused before decompressing', async () => {
    const file = await fileOf(await genuineLines());
    const err = await refused(new Blob([file as Uint8Array<ArrayBuffer>]), { maxBytes: 100 });
    expect(err.message).toMatch(/larger than the import limit of 100 bytes/);
    expect((await refused(file, { maxBytes: 100 })).message).toMatch(/larger than the import limit of 100 bytes \(compressed\)/);
  });

  it('a body that does not match its header (records removed, adapter removed or added)', async () => {
    const lines = await genuineLines(true);
    const dropped = await refused(fileOf([...lines.slice(0, 3), ...lines.slice(5)]));
    expect(dropped.message).toMatch(/header promises 38 records but the file holds 36; it was cut off or edited/);
    expect((await refused(fileOf(lines.slice(0, -1)))).message).toMatch(/promises the adapter of version 2 but the file has none/);
    const header = JSON.stringify({ ...JSON.parse(lines[0]), adapter: null });
    expect((await refused(fileOf([header, ...lines.slice(1)]))).message).toMatch(/ends with an adapter its header does not mention/);
  });

  it('anything after the adapter line, or a damaged adapter', async () => {
    const lines = await genuineLines(true);
    const after = await refused(fileOf([...lines, lines[1]]));
    expect(after.message).toMatch(/line \d+ follows the adapter line, which must be last/);
    const adapter = JSON.parse(lines.at(-1)!);
    const bad = (a: object) => fileOf([...lines.slice(0, -1), JSON.stringify({ adapter: { ...adapter.adapter, ...a } })]);
    expect((await refused(bad({ safetensorsBase64: 'not base64!' }))).field).toBe('adapter.safetensorsBase64');
    expect((await refused(bad({ safetensorsBase64: 'AAAAAAAAAAAA' }))).message).toMatch(/does not hold a safetensors file/);
    expect((await refused(bad({ config: '[1,2]' }))).field).toBe('adapter.config');
    expect((await refused(bad({ version: 1.5 }))).field).toBe('adapter.version');
  });

  it('the adapter line is allowed only where the header promises one, and is never JSON.parsed whole', async () => {
    const lines = await genuineLines();
    const parsed = largestJsonParse();
    // The review's 150 M "[" cost 11 GB through JSON.parse; 3 M are enough to show none is parsed.
    const err = await refused(fileOf([...lines, '{"adapter":' + '['.repeat(3_000_000)]));
    expect(err.message).toBe('The run file ends with an adapter its header does not mention; it was edited. Export the run again.');
    expect([err.line, err.field]).toEqual([lines.length + 1, 'adapter']);
    const short = await refused(fileOf([...lines, '{"adapter":' + '[]'.repeat(1000)]));
    expect(short.line).toBe(lines.length + 1);
    expect(parsed()).toBeLessThan(100_000);
  });

  it('the adapter line is capped from the byte count its header declares', async () => {
    const lines = await genuineLines(true);
    const { bytes } = JSON.parse(lines[0]).adapter;
    const limit = adapterLineLimit(bytes);
    const long = `{"adapter":{"version":2,"config":"{}","safetensorsBase64":"${'A'.repeat(limit)}"}}`;
    const err = await refused(fileOf([...lines.slice(0, -1), long]));
    expect(err.message).toBe(
      `Run file line ${lines.length} is longer than the limit of ${limit.toLocaleString('en-US')} characters for one line; the file is damaged or not a run file.`,
    );
  });

  it('the adapter line is read shape-first: nesting, unknown fields and oversized values stop at once', async () => {
    const lines = await genuineLines(true);
    const header = JSON.parse(lines[0]);
    // A header promising 30 MB, so the cap from the declared size does not stop these lines.
    const promising = JSON.stringify({ ...header, adapter: { version: 2, bytes: 30_000_000 } });
    const withAdapter = (line: string) => refused(fileOf([promising, ...lines.slice(1, -1), line]));
    const parsed = largestJsonParse();
    const nested = await withAdapter('{"adapter":' + '['.repeat(2_000_000) + ']'.repeat(2_000_000) + '}');
    expect([nested.field, nested.line]).toEqual(['adapter', lines.length]);
    expect(nested.message).toMatch(/\(adapter\): field "adapter" must be a JSON object\. The adapter is damaged/);
    expect((await withAdapter('{"adapter":{"version":2,"config":' + '['.repeat(2_000_000) + '}}')).field).toBe('adapter.config');
    expect((await withAdapter('{"adapter":{"version":2,"config":"' + '['.repeat(500_000) + '"}}')).message).toMatch(
      /field "adapter.config" is not a JSON object/,
    );
    expect((await withAdapter('{"adapter":{"version":2,"config":"' + 'x'.repeat(1_000_001) + '"}}')).message).toMatch(
      /field "adapter.config" is longer than 1,000,000 characters/,
    );
    expect((await withAdapter('{"adapter":{"version":2,"version":2}}')).message).toMatch(/field "adapter.version" appears twice/);
    expect((await withAdapter('{"adapter":{"weights":[]}}')).message).toMatch(/field "adapter.weights" is not a known field/);
    expect((await withAdapter('{"adapter":{"version":2},"more":1}')).field).toBe('(line)');
    expect((await withAdapter('{"adapter":{"version":2,"config":"{}","safetensorsBase64":"QUFB\\u0041"}}')).field).toBe('adapter.safetensorsBase64');
    expect(parsed()).toBeLessThan(100_000);
  });

  it('the adapter must hold exactly the bytes its header declares', async () => {
    const lines = await genuineLines(true);
    const header = JSON.parse(lines[0]);
    const { bytes } = header.adapter;
    const lying = JSON.stringify({ ...header, adapter: { ...header.adapter, bytes: bytes + 8 } });
    const err = await refused(fileOf([lying, ...lines.slice(1)]));
    expect(err.message).toBe(
      `Run file line ${lines.length} (adapter): field "adapter.safetensorsBase64" holds ${bytes} bytes but the header promises ${bytes + 8}. The adapter is damaged; export the run again.`,
    );
  });

  it('a record line nested deeper than any record is refused before JSON.parse', async () => {
    const lines = await genuineLines();
    const parsed = largestJsonParse();
    const err = await refused(fileOf([...lines.slice(0, 2), '['.repeat(1_000_000) + ']'.repeat(1_000_000), ...lines.slice(2)]));
    expect(err.message).toBe('Run file line 3 nests deeper than 256 levels; the file is damaged or not a run file.');
    expect(parsed()).toBeLessThan(100_000);
  });

  it('times past what Date accepts, in the header or a record, are refused (they broke the run page)', async () => {
    const [header, first, ...rest] = await genuineLines();
    const h = JSON.parse(header);
    const created = await refused(fileOf([JSON.stringify({ ...h, run: { ...h.run, created: 1e300 } }), first, ...rest]));
    expect([created.line, created.field]).toEqual([1, 'run.created']);
    expect((await refused(fileOf([JSON.stringify({ ...h, exported: 8.64e15 + 1 }), first, ...rest]))).field).toBe('exported');
    const event = { kind: 'runtime_event', version: 0, ts: 1e300, event: 'paused', message: 'x' };
    const record = await refused(fileOf([header, JSON.stringify(event), ...rest.slice(0, -1)]));
    expect([record.line, record.field]).toEqual([2, 'ts']);
  });

  it('header fields are checked, and a config cannot smuggle secrets or pollute prototypes', async () => {
    const [header, ...rest] = await genuineLines();
    const h = JSON.parse(header);
    const missing = { ...h };
    delete missing.summary;
    expect((await refused(fileOf([JSON.stringify(missing), ...rest]))).message).toMatch(/line 1 \(header\): field "summary" is missing/);
    const badPreset = { ...h, run: { ...h.run, config: { ...h.run.config, preset: { ...h.run.config.preset, method: 'ppo' } } } };
    expect((await refused(fileOf([JSON.stringify(badPreset), ...rest]))).field).toBe('run.config.preset.method');
    // The weight format the policy was stored in, in the header's models and in the config's modelRefs.
    const format = (header: string, config: string) => ({
      ...h,
      models: { policy: { ...h.models.policy, weightFormat: header } },
      run: { ...h.run, config: { ...h.run.config, modelRefs: { policy: { ...h.models.policy, weightFormat: config } } } },
    });
    for (const [bad, field] of [
      [format('q4"><script>', 'q4'), 'models.policy.weightFormat'],
      [format('q4', 'q4"><script>'), 'run.config.modelRefs.policy.weightFormat'],
    ] as const) {
      const err = await refused(fileOf(resealed([JSON.stringify(bad), ...rest])));
      expect(err.message).toContain(`field "${field}" must be one of "f32", "f16", "q8", "q4", got "q4\\"><script>"`);
      expect(err.message.split('\n')).toHaveLength(1);
    }
    const q4 = newStore();
    const q4Id = await importRun(q4, await fileOf(resealed([JSON.stringify(format('q4', 'q4')), ...rest])));
    expect((await q4.getRun(q4Id))!.config.modelRefs?.policy.weightFormat).toBe('q4');
    const deep = { ...h, run: { ...h.run, config: { ...h.run.config, deep: JSON.parse('['.repeat(100) + ']'.repeat(100)) } } };
    expect((await refused(fileOf([JSON.stringify(deep), ...rest]))).message).toMatch(/nests deeper than 32 levels/);

    const sneaky = `{"__proto__":{"polluted":true},"apiKey":"sk-smuggled","endpoint":"http://x"}`;
    const withSneaky = header.replace('"scenario":', `"extra":${sneaky},"scenario":`);
    const store = newStore();
    const id = await importRun(store, await fileOf(resealed([withSneaky, ...rest])));
    const config = (await store.getRun(id))!.config;
    expect(config.extra).toEqual({ endpoint: 'http://x' });
    expect(Object.getPrototypeOf(config.extra)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(config)).not.toContain('sk-smuggled');
  });

  it('HTML in every text field stays inert text, byte for byte', async () => {
    const html = '<iframe srcdoc="<script>parent.x=1</script>"></iframe><b onmouseover=alert(1)>hi</b>';
    const [header, ...rest] = await genuineLines();
    const edited = rest.map((l) => l.replaceAll('Two plus two is four.', JSON.stringify(html).slice(1, -1)));
    const store = newStore();
    const id = await importRun(store, await fileOf(resealed([header, ...edited])));
    const texts = (await store.records(id)).flatMap(({ record: r }) =>
      r.kind === 'interaction' ? [r.response, ...r.messages.map((m) => m.content)] : r.kind === 'judge_vote' ? [r.raw, r.hint ?? ''] : [],
    );
    expect(texts.filter((t) => t.includes(html)).length).toBeGreaterThan(10);
    const out = await gunzip(await exportRun(store, id));
    expect(out.split('\n').slice(1, -1)).toEqual(edited);
  });

  it('a change that leaves every line well formed fails the integrity hashes, saying which part', async () => {
    const lines = await genuineLines(true);
    const edited = lines.map((l) => l.replace('Two plus two is four.', 'Two plus two is five.'));
    expect(edited).not.toEqual(lines);
    const records = await refused(fileOf(edited));
    expect(records.message).toBe(
      "This run file's records do not match the SHA-256 it carries: it was damaged or edited after export. Get an intact copy, or export the run again from the app that made it.",
    );
    expect([records.line, records.field]).toEqual([lines.length, 'integrity.body']);
    // Two records swapped: same lines, same count, another order.
    const swapped = [lines[0], lines[2], lines[1], ...lines.slice(3)];
    expect((await refused(fileOf(swapped))).field).toBe('integrity.body');
    const relabelled = lines[0].replace('"label":"genuine"', '"label":"genuine, honestly"');
    const header = await refused(fileOf([relabelled, ...lines.slice(1)]));
    expect(header.message).toMatch(/^This run file's header does not match the SHA-256 it carries: it was damaged or edited after export/);
    expect([header.line, header.field]).toEqual([1, 'integrity.header']);
    // The adapter line is covered too.
    const adapter = lines.at(-1)!.replace('"version":2', '"version":2 ');
    expect((await refused(fileOf([...lines.slice(0, -1), adapter]))).field).toBe('integrity.body');
    // inspect and the adapter extraction check the same hashes.
    expect((await inspectRunFile(await fileOf(edited)).catch((e) => e)).field).toBe('integrity.body');
  });

  it('an integrity field of the wrong shape is a header error', async () => {
    const [header, ...rest] = await genuineLines();
    const h = JSON.parse(header);
    const weak = await refused(fileOf([JSON.stringify({ ...h, integrity: { ...h.integrity, algorithm: 'md5' } }), ...rest]));
    expect(weak.field).toBe('integrity.algorithm');
    const short = await refused(fileOf([JSON.stringify({ ...h, integrity: { ...h.integrity, body: 'abc' } }), ...rest]));
    expect(short.message).toMatch(/field "integrity.body" must be a string of at least 64 characters/);
  });

  it('inspect refuses the same files', async () => {
    const lines = await genuineLines();
    lines[4] = '{}';
    const err = await inspectRunFile(await fileOf(lines)).catch((e) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect(err.line).toBe(5);
    // The header alone is fine.
    expect((await inspectRunFile(await fileOf(lines), { headerOnly: true })).header.run.label).toBe('genuine');
  });
});

/** Watches JSON.parse; returns the length of the longest text it was given since. */
function largestJsonParse(): () => number {
  const real = JSON.parse;
  let largest = 0;
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    largest = Math.max(largest, String(text).length);
    return real(text, reviver);
  });
  return () => largest;
}

/** gzip of `head` followed by `chunk` repeated `times` times, without holding the whole text. */
async function gzipRepeated(head: Uint8Array<ArrayBuffer>, chunk: Uint8Array<ArrayBuffer>, times: number): Promise<Uint8Array> {
  let i = -1;
  const text = new ReadableStream<BufferSource>({
    pull(c) {
      if (i === -1) c.enqueue(head);
      else if (i < times) c.enqueue(chunk);
      else c.close();
      i++;
    },
  });
  return new Uint8Array(await new Response(text.pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
}

/**
 * Counts what DecompressionStream hands out, to show the import stopped inflating at the
 * limit. Decompression is pulled, so output not handed out was never inflated.
 */
function countInflated(): () => number {
  const Real = globalThis.DecompressionStream;
  let total = 0;
  class Counting {
    readonly writable: WritableStream<BufferSource>;
    readonly readable: ReadableStream<Uint8Array>;
    constructor(format: CompressionFormat) {
      const real = new Real(format);
      this.writable = real.writable;
      this.readable = real.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            total += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      );
    }
  }
  vi.stubGlobal('DecompressionStream', Counting);
  return () => total;
}
