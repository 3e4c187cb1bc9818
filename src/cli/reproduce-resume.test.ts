/**
 * `nextstate reproduce` in a folder it ran in before: a run cut off mid-way goes on from its
 * journal with `run --resume`, one that finished but lost its scores is read back, and one whose
 * config changed runs again from the start (the tiny fixture, two steps).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { runCli } from '../../test/support/cli/run-cli';
import type { RunRecord } from '../rl/records';
import { exampleConfig } from '../runtime/run-config';
import { journalPath, readJournal } from '../runtime/run-journal';

const dir = mkdtempSync(join(tmpdir(), 'nextstate-reproduce-resume-'));
let configFile = '';
const out = join(dir, 'out');
const file = join(out, 'binary-seed1.nsrun');

beforeAll(async () => {
  const { dir: model } = await tinyModel({ family: 'qwen3' });
  const config = exampleConfig('storyteller', model, 'binary');
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 2, evalEvery: 1, evalProblems: 1, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
  configFile = join(dir, 'run.json');
  writeFileSync(configFile, JSON.stringify(config));
});

/** `reproduce` of the one binary run, two steps; its 'run' line, and what it noted on stderr. */
async function reproduce(evalEvery = 1): Promise<{ reused: boolean; resumed: boolean; scores: { step: number }[]; notes: string[] }> {
  const r = await runCli(
    'reproduce',
    '--config',
    configFile,
    '--out',
    out,
    '--seeds',
    '1',
    '--methods',
    'binary',
    '--steps',
    '2',
    '--eval-every',
    String(evalEvery),
    '--json',
  );
  expect(r.code, r.err.join('\n')).toBe(0);
  return { ...r.out.map((l) => JSON.parse(l)).find((e) => e.type === 'run'), notes: r.err };
}

const steps = (records: readonly RunRecord[]) => records.flatMap((r) => (r.kind === 'train_step' ? [r.step] : []));

/** As if the run were killed after its first step: the journal cut there, no scores yet. */
function interruptAfterStep1(): RunRecord[] {
  const journal = readJournal(journalPath(file));
  const cut = journal.records.findIndex((r) => r.kind === 'version_boundary') + 1;
  writeFileSync(journalPath(file), [journal.header, ...journal.records.slice(0, cut)].map((x) => JSON.stringify(x) + '\n').join(''));
  rmSync(`${file}.scores.json`);
  return journal.records.slice(0, cut);
}

describe('nextstate reproduce in a folder it ran in', () => {
  it('resumes an interrupted run from its journal, reads back a finished one, and reruns one whose config changed', async () => {
    expect(await reproduce()).toMatchObject({ reused: false, resumed: false });
    expect(await reproduce()).toMatchObject({ reused: true, resumed: false });

    const kept = interruptAfterStep1();
    const resumed = await reproduce();
    expect(resumed).toMatchObject({ reused: false, resumed: true });
    // What the resume did, in one line naming the run.
    expect(resumed.notes.filter((l) => l.includes('resumed at step'))).toEqual([
      expect.stringMatching(/^.*binary-seed1\.nsrun: resumed at step 1 \(v1\) with \d+ buffered samples?; (no turn|\d+ turns?) of the interrupted step 2 /),
    ]);
    expect(resumed.scores.map((s) => s.step)).toEqual([0, 1, 2]);
    const journal = readJournal(journalPath(file));
    expect(journal.records.slice(0, kept.length)).toEqual(kept);
    expect(steps(journal.records)).toEqual([1, 2]);

    // Finished, but stopped before its scores were written: read from its journal, nothing run.
    rmSync(`${file}.scores.json`);
    const read = await reproduce();
    expect(read).toMatchObject({ reused: false, resumed: false, scores: resumed.scores });
    expect(readJournal(journalPath(file)).records).toEqual(journal.records);

    // Another config (evaluations every 2 steps): the interrupted run is not this one's.
    interruptAfterStep1();
    const again = await reproduce(2);
    expect(again).toMatchObject({ reused: false, resumed: false });
    expect(again.scores.map((s) => s.step)).toEqual([0, 2]);
    const fresh = readJournal(journalPath(file));
    expect(fresh.header.created).toBeGreaterThan(journal.header.created);
    expect(steps(fresh.records)).toEqual([1, 2]);
  });
});
