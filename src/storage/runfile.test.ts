import 'fake-indexeddb/auto';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { PEFT_WEIGHTS } from '../gpu/peft';
import { gunzip, gzip, peftFiles, sampleRun, testConfig, uniqueDbName } from '../../test/support/storage/fixtures';
import { extractAdapter, importRun, inspectRunFile } from './import';
import { readRunFile } from './reader';
import { APP_VERSION, exportRun, exportRunStream, RUN_FILE_FORMAT, RUN_FILE_VERSION, type RunFileHeader } from './runfile';
import { RunStore } from './store';
import { RunFileError, RunNotFoundError } from './errors';

const stores: RunStore[] = [];
function newStore(): RunStore {
  const store = new RunStore({ name: uniqueDbName('runfile') });
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const SECRET = 'sk-PLANTED-7f3a9c';
const HTML = '<img src=x onerror="alert(1)"><script>alert(\'x\')</script> &amp; </textarea> \u2028 \u{1F389} "quoted" \\ back';

async function sourceRun(text?: string) {
  const store = newStore();
  const id = await store.createRun(testConfig(), `label ${HTML}`);
  await store.setNotes(id, `notes ${HTML}`);
  await store.setStatus(id, 'finished');
  await store.appendMany(id, sampleRun(text));
  await store.saveAdapter(id, 1, peftFiles(1));
  await store.saveAdapter(id, 2, peftFiles(2));
  return { store, id };
}

const bytesOf = async (blob: Blob) => new Uint8Array(await blob.arrayBuffer());
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

describe('export -> import round trip', () => {
  it('gives identical records, metrics, adapter and run metadata', async () => {
    const { store, id } = await sourceRun(HTML);
    const file = await exportRun(store, id, { includeAdapter: true });
    expect(file.type).toBe('application/gzip');

    const target = newStore();
    const imported = await importRun(target, file);
    expect(await target.records(imported)).toEqual(await store.records(id));
    expect(await target.metrics(imported)).toEqual(await store.metrics(id));
    expect(await target.latestAdapter(imported)).toMatchObject({ version: 2, files: peftFiles(2) });
    expect(await target.adapterVersions(imported)).toEqual([2]);
    const source = (await store.getRun(id))!;
    const run = (await target.getRun(imported))!;
    expect(run).toMatchObject({ label: source.label, notes: source.notes, created: source.created, status: 'imported', readOnly: true });
    expect(run.config).toEqual(source.config);
    expect(run.bytes).toBe(source.bytes - peftFiles(1)[PEFT_WEIGHTS].byteLength - peftFiles(1)['adapter_config.json'].length);
  });

  it('keeps HTML and unusual text byte-exact, as inert text', async () => {
    const { store, id } = await sourceRun(HTML);
    const first = await gunzip(await exportRun(store, id));
    const target = newStore();
    const imported = await importRun(target, await exportRun(store, id));
    const again = await gunzip(await exportRun(target, imported));
    // Same record lines, byte for byte; only the header (export time, status) differs.
    expect(lines(again).slice(1)).toEqual(lines(first).slice(1));
    const [interaction] = await target.records(imported, { kind: 'interaction', limit: 1 });
    expect(interaction.record.kind === 'interaction' && interaction.record.response).toBe(HTML);
    expect((await target.getRun(imported))!.notes).toBe(`notes ${HTML}`);
  });

  it('accepts a Blob, bytes or a stream', async () => {
    const { store, id } = await sourceRun();
    const blob = await exportRun(store, id);
    const target = newStore();
    for (const input of [blob, await bytesOf(blob), blob.stream(), exportRunStream(store, id)]) {
      const runId = await importRun(target, input);
      expect((await target.records(runId)).length).toBe(sampleRun().length);
    }
    expect((await target.listRuns()).length).toBe(4);
  });

  it('exports a consistent snapshot while the run keeps appending', async () => {
    const { store, id } = await sourceRun();
    const exporting = exportRun(store, id, { pageSize: 3 });
    const more = sampleRun().map((r) => store.append(id, r));
    const [file] = await Promise.all([exporting, ...more]);
    const info = await inspectRunFile(file);
    expect(info.summary!.records).toBe(info.header.summary.records);
  });

  it('refuses to export a run that does not exist', async () => {
    const store = newStore();
    await expect(exportRun(store, 'missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });
});

describe('the file format', () => {
  it('is gzip of a header line, one record per line and an optional adapter line', async () => {
    const { store, id } = await sourceRun();
    const text = await gunzip(await exportRun(store, id, { includeAdapter: true, now: () => 1234 }));
    expect(text.endsWith('\n')).toBe(true);
    const all = lines(text).map((l) => JSON.parse(l));
    const header = all[0] as RunFileHeader;
    expect(header).toMatchObject({
      format: RUN_FILE_FORMAT,
      formatVersion: RUN_FILE_VERSION,
      appVersion: APP_VERSION,
      exported: 1234,
      run: { label: `label ${HTML}`, status: 'finished' },
      models: testConfig().modelRefs,
      seeds: testConfig().seeds,
      adapter: { version: 2, bytes: peftFiles(2)[PEFT_WEIGHTS].byteLength },
    });
    expect(header.summary).toMatchObject({
      records: sampleRun().length,
      steps: 2,
      skippedSteps: 0,
      lastStep: 1,
      evaluations: 2,
      sessions: 1,
      lastVersion: 2,
      firstEvaluation: { name: 'personalization', step: null, version: 0, scores: { mean: 0.17, n: 2 } },
      lastEvaluation: { name: 'personalization', step: 1, version: 2, scores: { mean: 0.76, n: 2 } },
    });
    expect(header.summary.byKind).toMatchObject({ interaction: 5, sample: 5, train_step: 2, session_end: 1 });
    // Never resumed: no count of turns a resume left behind, so older readers take the summary as before.
    expect(header.summary).not.toHaveProperty('interruptedTurns');
    expect(all.slice(1, -1)).toEqual(sampleRun());
    expect(Object.keys(all.at(-1))).toEqual(['adapter']);
    expect(all.at(-1).adapter).toMatchObject({ version: 2, config: peftFiles(2)['adapter_config.json'] });
  });

  it('carries SHA-256 hashes of its header (less the hashes) and of every line after it', async () => {
    const { store, id } = await sourceRun(HTML);
    const text = await gunzip(await exportRun(store, id, { includeAdapter: true }));
    const [headerLine, ...body] = lines(text);
    const { integrity, ...rest } = JSON.parse(headerLine);
    const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
    expect(integrity).toEqual({ algorithm: 'sha-256', header: sha(JSON.stringify(rest)), body: sha(body.map((l) => l + '\n').join('')) });
    expect((await inspectRunFile(await exportRun(store, id, { includeAdapter: true }))).integrity).toBe('verified');
  });

  it('reads files written before the hashes, marked unverified wherever they are shown', async () => {
    const { store, id } = await sourceRun();
    const [headerLine, ...body] = lines(await gunzip(await exportRun(store, id, { includeAdapter: true })));
    const { integrity: _integrity, ...old } = JSON.parse(headerLine);
    const file = await gzip([JSON.stringify(old), ...body].join('\n') + '\n');
    const info = await inspectRunFile(file);
    expect(info.integrity).toBe('unverified');
    expect(info.header.integrity).toBeNull();
    expect((await inspectRunFile(file, { headerOnly: true })).integrity).toBeNull();
    const target = newStore();
    const oldRun = await importRun(target, file);
    expect((await target.records(oldRun)).length).toBe(sampleRun().length);
    expect((await target.getRun(oldRun))!.integrity).toBe('unverified');
    const newRun = await importRun(target, await exportRun(store, id));
    expect((await target.getRun(newRun))!.integrity).toBe('verified');
    // A run made here is no import: it says nothing of files.
    expect((await store.getRun(id))!.integrity).toBeUndefined();
  });

  it('leaves the adapter out unless asked', async () => {
    const { store, id } = await sourceRun();
    const text = await gunzip(await exportRun(store, id));
    expect(JSON.parse(lines(text)[0]).adapter).toBeNull();
    expect(lines(text)).toHaveLength(1 + sampleRun().length);
  });
});

describe('secrets', () => {
  it('never writes API keys, tokens or authorization headers, at any depth, nor any setting', async () => {
    const store = newStore();
    // createRun already drops these; plant them in the stored row directly to test export alone.
    const id = await store.createRun(testConfig(), 'r');
    const planted = {
      ...testConfig(),
      judge: { endpoint: 'http://localhost:8000/v1', apiKey: SECRET, headers: { Authorization: `Bearer ${SECRET}`, 'X-Trace': 'ok' } },
      users: [{ backend: 'openai', api_key: SECRET, nested: [{ client_secret: SECRET, hfToken: SECRET }] }],
      token: SECRET,
    };
    await store.db.runs.update(id, { config: planted });
    await store.setSetting('endpoint.judge.apiKey', SECRET);
    await store.appendMany(id, sampleRun());
    const file = await exportRun(store, id, { includeAdapter: true });
    const text = await gunzip(file);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('PLANTED');
    const config = JSON.parse(lines(text)[0]).run.config;
    expect(config.judge).toEqual({ endpoint: 'http://localhost:8000/v1', headers: { 'X-Trace': 'ok' } });
    expect(config.users).toEqual([{ backend: 'openai', nested: [{}] }]);
    // Counts named like tokens are not secrets.
    expect(config.preset.judge.maxNewTokens).toBe(testConfig().preset.judge.maxNewTokens);
    expect(new TextDecoder('latin1').decode(await bytesOf(file))).not.toContain(SECRET);
  });
});

describe('local paths', () => {
  it('leave the machine as model names: the run file names folders, the database keeps the paths', async () => {
    const store = newStore();
    const local = '/home/alice/secret-project/models/Qwen3-0.6B';
    const config = testConfig({ models: { policy: { model: local } }, modelRefs: { policy: { id: local, files: { 'model.safetensors': 'ab'.repeat(32) } } } });
    const id = await store.createRun(config, 'local');
    await store.appendMany(id, sampleRun());
    const text = await gunzip(await exportRun(store, id));
    expect(text).not.toContain('/home/alice');
    const header = JSON.parse(lines(text)[0]);
    expect(header.run.config.models.policy.model).toBe('Qwen3-0.6B');
    expect(header.models.policy).toEqual({ id: 'Qwen3-0.6B', files: { 'model.safetensors': 'ab'.repeat(32) } });
    expect((await store.getRun(id))!.config.models).toEqual({ policy: { model: local } });
  });
});

describe('inspectRunFile and extractAdapter', () => {
  it('report the header, a summary counted from the records, and the adapter', async () => {
    const { store, id } = await sourceRun();
    const file = await exportRun(store, id, { includeAdapter: true });
    const info = await inspectRunFile(file);
    expect(info.header.run.label).toBe(`label ${HTML}`);
    expect(info.summary).toEqual(info.header.summary);
    expect(info.adapter).toEqual({ version: 2, bytes: peftFiles(2)[PEFT_WEIGHTS].byteLength });
    expect(info.lines).toBe(sampleRun().length + 2);
    const adapter = await extractAdapter(file);
    expect(adapter).toEqual({ version: 2, files: peftFiles(2) });
  });

  it('can stop after the header', async () => {
    const { store, id } = await sourceRun();
    const info = await inspectRunFile(await exportRun(store, id), { headerOnly: true });
    expect(info).toMatchObject({ summary: null, lines: 1, adapter: null });
    expect(info.header.summary.records).toBe(sampleRun().length);
  });

  it('extractAdapter explains a file without an adapter', async () => {
    const { store, id } = await sourceRun();
    const err = await extractAdapter(await exportRun(store, id)).catch((e) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect(err.message).toMatch(/holds no adapter\. Export the run again with the adapter included/);
  });

  it('readRunFile yields header, records, adapter and end in order', async () => {
    const { store, id } = await sourceRun();
    const kinds: string[] = [];
    for await (const item of readRunFile(await exportRun(store, id, { includeAdapter: true }))) kinds.push(item.kind);
    expect(kinds).toEqual(['header', ...sampleRun().map(() => 'record'), 'adapter', 'end']);
  });
});
