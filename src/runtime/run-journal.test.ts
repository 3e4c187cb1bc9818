import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleConfig } from './run-config';
import type { InteractionRecord, RunRecord } from '../rl/records';
import { journalPath, parseJournal, readJournal, RunJournal, RunJournalError } from './run-journal';
import { statusPath, writeLiveStatus } from './run-status';

const MiB = 1 << 20;
const end = (i: number): RunRecord => ({ kind: 'session_end', version: 0, ts: i, session: `s${i}`, reason: 'timeout', turns: 1, mainTurns: 1 });
const encode = (text: string) => new TextEncoder().encode(text);

/** One record's line padded with spaces (JSON allows them) to `bytes`: a large line that costs JSON.parse little. */
function paddedLine(record: RunRecord, bytes: number): Uint8Array {
  const json = JSON.stringify(record);
  return encode(json + ' '.repeat(bytes - json.length - 1) + '\n');
}

describe('the journal reader', () => {
  it('reads a journal of more than 512 MiB line by line, generated on the fly, and drops a last line cut short', () => {
    const lines = 600;
    const line = paddedLine(end(1), MiB);
    const header = encode(JSON.stringify({ config: exampleConfig('student'), label: 'big', created: 1 }) + '\n');
    function* chunks() {
      yield header;
      // The same buffer each time: the reader may keep no chunk past its lines.
      for (let i = 0; i < lines; i++) yield line;
      yield encode('{"kind":"session_e');
    }
    const journal = parseJournal(chunks(), 'big.nsrun.journal');
    expect(journal.records.length).toBe(lines);
    expect(journal.records[lines - 1]).toEqual(end(1));
    expect(journal.headerBytes).toBe(header.length);
    expect(journal.validBytes).toBe(header.length + lines * MiB);
    expect(journal.validBytes).toBeGreaterThan(512 * MiB);
  });

  it('finds lines that span chunks, and refuses a complete line longer than any record in one line', () => {
    const text = JSON.stringify({ config: {}, label: 'x', created: 1 }) + '\n' + JSON.stringify(end(2)) + '\n';
    const bytes = encode(text);
    const oneByteAtATime = function* () {
      for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
    };
    expect(parseJournal(oneByteAtATime(), 'j').records).toEqual([end(2)]);

    const long = function* () {
      yield bytes;
      for (let i = 0; i < 17; i++) yield encode(' '.repeat(MiB));
      yield encode('\n');
    };
    expect(() => parseJournal(long(), 'j')).toThrow(RunJournalError);
    expect(() => parseJournal(long(), 'j')).toThrow(/^j line 3 is longer than 16,000,000 bytes, more than any record; .* Start a new --out\.$/);
  });

  it("refuses a complete line the run file's reader would refuse (deeper than 256 levels, longer than 4 M characters) in one line naming it; a deep torn tail is cut off", async () => {
    const header = JSON.stringify({ config: exampleConfig('student'), label: 'deep', created: 1 }) + '\n';
    // A served turn whose tool schema nests `depth` levels in all (the record, tools, the tool, then the schema's own).
    const served = (depth: number): InteractionRecord => {
      let schema: object = {};
      for (let i = 3; i < depth; i++) schema = { p: schema };
      return {
        kind: 'interaction',
        version: 0,
        ts: 1,
        session: 's0',
        turn: 1,
        turnType: 'main',
        messages: [{ role: 'user', content: 'hi' }],
        response: 'ok',
        tokenIds: [1],
        logprobs: [-1],
        tools: [schema],
        startedAt: 1,
        finishedAt: 1,
      };
    };
    const journal = (...lines: string[]) => [encode(header + lines.join(''))];
    const line = (r: RunRecord) => JSON.stringify(r) + '\n';
    expect(parseJournal(journal(line(end(1)), line(served(256))), 'j').records).toEqual([end(1), served(256)]);
    const refused = /^j line 3 nests deeper than 256 levels, the most a run file line may; the journal is damaged, so it cannot resume\. Start a new --out\.$/;
    expect(() => parseJournal(journal(line(end(1)), line(served(257))), 'j')).toThrow(refused);
    // 100,000 levels: refused from the text, before JSON.parse or the validator could recurse into it.
    expect(() => parseJournal(journal(line(end(1)), '['.repeat(100_000) + ']'.repeat(100_000) + '\n'), 'j')).toThrow(refused);
    expect(() => parseJournal([encode('['.repeat(300) + ']'.repeat(300) + '\n')], 'j')).toThrow(/^j line 1 nests deeper than 256 levels/);
    // The same cut-short tail as any other: never a line, never parsed.
    expect(parseJournal(journal(line(end(1)), '['.repeat(100_000)), 'j').records).toEqual([end(1)]);
    // ASCII, so within the byte cap: the characters are what the run file's reader counts.
    const wide = new TextDecoder().decode(paddedLine(end(2), 4_000_002));
    expect(() => parseJournal(journal(line(end(1)), wide), 'j')).toThrow(
      /^j line 3 is longer than 4,000,000 characters, the most a run file line may hold; .* Start a new --out\.$/,
    );

    // On resume, from the file: the same line, and the journal is left as it was.
    const file = join(mkdtempSync(join(tmpdir(), 'nextstate-journal-')), 'run.nsrun');
    writeFileSync(journalPath(file), header + line(end(1)) + line(served(300)));
    const before = statSync(journalPath(file)).size;
    await expect(RunJournal.resume(file, {})).rejects.toThrow(new RegExp(`^${journalPath(file)} line 3 nests deeper than 256 levels`));
    expect(statSync(journalPath(file)).size).toBe(before);
  });

  it('resumes a journal file whose torn tail is a sparse 520 MiB, in the memory of one chunk, and cuts the tail off', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'nextstate-journal-')), 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'sparse', {});
    await run.append([end(1), end(2)]);
    await run.close();
    const committed = statSync(journalPath(file)).size;
    // A hole reads as zero bytes with no newline: a write cut short, 520 MiB long, read from a file.
    appendFileSync(journalPath(file), '{"kind":');
    truncateSync(journalPath(file), committed + 520 * MiB);
    const { run: resumed } = await RunJournal.resume(file, {});
    expect(resumed.all).toEqual([end(1), end(2)]);
    await resumed.close();
    expect(statSync(journalPath(file)).size).toBe(committed);
  });

  it('rewrites the header of a resumed journal by copying its records, not reading the file whole', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'nextstate-journal-')), 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'edit', {});
    await run.append([end(1), end(2)]);
    await run.close();
    appendFileSync(journalPath(file), '{"kind":"sess');
    const { run: resumed, config } = await RunJournal.resume(file, {}, (c) => ({ ...c, label: 'edited' }));
    expect(config.label).toBe('edited');
    await resumed.close();
    const journal = readJournal(journalPath(file));
    expect(journal.header.config.label).toBe('edited');
    expect(journal.records).toEqual([end(1), end(2)]);
    expect(statSync(journalPath(file)).size).toBe(journal.validBytes);
    writeFileSync(journalPath(file), '');
    expect(() => readJournal(journalPath(file))).toThrow(/has no header line/);
  });

  it('refuses to resume a run that another live process holds, and resumes it once that process is gone', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'nextstate-journal-')), 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'held', {});
    await run.append([end(1)]);
    await run.close();
    // Another process that holds the run, as a second `reproduce` on the same folder would find it.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    const pid = holder.pid!;
    try {
      writeLiveStatus(file, { pid, updated: Date.now(), training: null });
      const refused = RunJournal.resume(file, {});
      await expect(refused).rejects.toThrow(RunJournalError);
      await expect(refused).rejects.toThrow(
        `${file} is being run by process ${pid}; wait for it to end or stop it, then resume (if ${pid} is not nextstate, delete ${statusPath(file)})`,
      );
    } finally {
      const gone = new Promise((r) => holder.once('exit', r));
      holder.kill('SIGKILL');
      await gone;
    }
    // Its status is left behind, as after kill -9: the run resumes.
    const { run: resumed } = await RunJournal.resume(file, {});
    expect(resumed.all).toEqual([end(1)]);
    await resumed.close();
  });
});
