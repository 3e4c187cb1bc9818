/**
 * A run stopped in the middle of a step and resumed: the turns of sessions that had not reached
 * the buffer stay in the log, marked interrupted by the resumed run's first record, and are never
 * trained; the resume says so in one line, and inspect shows it (the tiny fixture).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { runCli } from '../../test/support/cli/run-cli';
import type { RunRecord, RuntimeEventRecord } from '../rl/records';
import { exampleConfig, type RunConfig } from '../runtime/run-config';
import { sessionIndexOf } from '../runtime/resume-plan';
import { resumeRunFile, runToFile } from './run';
import { journalPath, readJournal } from '../runtime/run-journal';

const dir = mkdtempSync(join(tmpdir(), 'nextstate-resume-interrupted-'));
let config: RunConfig;

beforeAll(async () => {
  const { dir: model } = await tinyModel({ family: 'qwen3' });
  config = exampleConfig('storyteller', model, 'binary');
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 2, evalEvery: 1000, evalProblems: 1, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
});

const key = (session: string, turn: number) => `${session}#${turn}`;

describe('a run resumed in the middle of a step', () => {
  it('keeps the cut-off turns, marks them interrupted in one record and one line, and never trains them', async () => {
    const file = join(dir, 'cut.nsrun');
    await runToFile(config, { file });
    // As if killed once step 1 was checkpointed and sessions of step 2 had run, before any of them reached the buffer.
    const journal = readJournal(journalPath(file));
    const boundary = journal.records.findIndex((r) => r.kind === 'version_boundary');
    const cut = journal.records.findIndex((r, i) => i > boundary && r.kind === 'sample');
    expect(cut).toBeGreaterThan(boundary);
    const kept = journal.records.slice(0, cut);
    writeFileSync(journalPath(file), [journal.header, ...kept].map((x) => JSON.stringify(x) + '\n').join(''));

    // What the stop cut off: a fixed schedule buffers sessions in order, each one sample after the
    // other, so every main turn after the last buffered sample, other than a last turn its session
    // ended without judging.
    const samples = kept.filter((r) => r.kind === 'sample');
    const last = samples.at(-1)!;
    const lastBuffered = sessionIndexOf(last.session)!;
    const neverJudged = new Set(kept.flatMap((r) => (r.kind === 'session_end' && r.unjudgedTurn ? [key(r.session, r.unjudgedTurn)] : [])));
    const after = (session: string, turn: number) => {
      const index = sessionIndexOf(session)!;
      const lastTurn = Math.max(0, ...samples.filter((x) => x.session === session).map((x) => x.turn));
      return index > lastBuffered || (index === lastBuffered && turn > lastTurn);
    };
    const cutOff = kept.flatMap((r) =>
      r.kind === 'interaction' && r.turnType === 'main' && after(r.session, r.turn) && !neverJudged.has(key(r.session, r.turn)) ? [key(r.session, r.turn)] : [],
    );
    expect(cutOff.length).toBeGreaterThan(0);
    // The session whose samples came next in the uninterrupted run is among them.
    const next = journal.records[cut] as Extract<RunRecord, { kind: 'sample' }>;
    expect(cutOff).toContain(key(next.session, next.turn));

    const lines: Record<string, unknown>[] = [];
    const result = await resumeRunFile(file, { onLine: (l) => lines.push(l as Record<string, unknown>) });
    expect(result.status).toBe('finished');
    const log = readJournal(journalPath(file)).records;
    // Nothing logged is rewritten: the marker is the resumed run's first record.
    expect(log.slice(0, kept.length)).toEqual(kept);
    const marker = log[kept.length] as RuntimeEventRecord;
    expect(marker).toMatchObject({ kind: 'runtime_event', event: 'run_resumed', step: 1, version: 1 });
    expect(marker.interrupted!.flatMap((s) => s.turns.map((t) => key(s.session, t))).sort()).toEqual([...cutOff].sort());
    const sessions = new Set(cutOff.map((k) => k.split('#')[0]));
    const buffered = samples.length - kept.reduce((n, r) => n + (r.kind === 'train_step' ? r.samples : 0), 0);
    expect(marker.message).toBe(
      `resumed at step 1 (v1) with ${buffered} buffered sample${buffered === 1 ? '' : 's'}; ` +
        `${cutOff.length} turns of the interrupted step 2 kept, marked interrupted, never trained (${sessions.size} session${sessions.size === 1 ? '' : 's'})`,
    );
    expect(lines.filter((l) => l.type === 'resumed')).toEqual([{ type: 'resumed', step: 1, version: 1, interrupted: cutOff.length, message: marker.message }]);
    // Never trained, never judged again: no later record is about them, and new sessions have new names.
    const resumed = log.slice(kept.length + 1);
    const about = (r: RunRecord) => ('turn' in r && r.session !== undefined ? cutOff.includes(key(r.session, r.turn as number)) : false);
    expect(resumed.filter(about)).toEqual([]);
    expect(resumed.filter((r) => r.kind === 'interaction' && sessions.has(r.session))).toEqual([]);
    expect(resumed.filter((r) => r.kind === 'train_step').map((r) => r.step)).toEqual([2]);

    // The run file holds the marker: inspect reads it back (every line validated) and counts the turns.
    const inspected = await runCli('inspect', file);
    expect(inspected.code, inspected.err.join('\n')).toBe(0);
    expect(inspected.out).toContain(
      `interrupted turns: ${cutOff.length} (a stop cut them off before they reached the buffer; the resumed run went on without them: kept in the log, marked, never trained)`,
    );
    const json = await runCli('inspect', file, '--json');
    expect(JSON.parse(json.out[0]).summary.interruptedTurns).toBe(cutOff.length);

    // `run --resume` prints the line even where no person watches (a log file), and a resume
    // that leaves nothing behind says that too.
    const more = await runCli('run', '--resume', file, '--steps', '3');
    expect(more.code, more.err.join('\n')).toBe(0);
    expect(more.err.filter((l) => l.startsWith('resumed at step'))).toEqual([
      expect.stringMatching(/^resumed at step 2 \(v2\) with \d+ buffered samples?; no turn of the interrupted step 3 was left behind$/),
    ]);
  }, 300_000);
});
