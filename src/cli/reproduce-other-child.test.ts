/**
 * `nextstate reproduce --methods opd,opd-other-child` on the storyteller (the tiny fixture, one
 * step): the control's teacher reads the rules judge's hints rewritten for the other child its
 * seed draws, its records say so, and the report pairs OPD against it and counts the other
 * child's pet and name in its evaluation stories. A config of another scenario is refused.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { runCli } from '../../test/support/cli/run-cli';
import type { JudgeResultRecord } from '../rl/records';
import { validateRecord } from '../rl/validate';
import { childLabel, otherChildFor } from '../sims/scenarios/other-child';
import { exampleConfig, type RunConfig } from '../runtime/run-config';
import { journalPath, readJournal } from '../runtime/run-journal';

const dir = mkdtempSync(join(tmpdir(), 'nextstate-reproduce-other-child-'));
let model = '';

/** A storyteller (or `name`) config of two-token answers and one step, written to a file. */
function configFile(name: 'storyteller' | 'student'): string {
  const config: RunConfig = exampleConfig(name, model, 'opd');
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 1, evalEvery: 1, evalProblems: 2, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

beforeAll(async () => {
  ({ dir: model } = await tinyModel({ family: 'qwen3' }));
});

describe('nextstate reproduce with the other-child control', () => {
  it('runs the control on the hints rewritten for its other child, records which, and reports the paired difference and the other child’s rates', async () => {
    const out = join(dir, 'story');
    const r = await runCli(
      'reproduce',
      '--config',
      configFile('storyteller'),
      '--out',
      out,
      '--seeds',
      '1',
      '--methods',
      'base,opd,opd-other-child',
      '--steps',
      '1',
      '--json',
    );
    expect(r.code, r.err.join('\n')).toBe(0);
    const lines = r.out.map((l) => JSON.parse(l));
    const control = lines.find((e) => e.type === 'run' && e.arm === 'opd-other-child');
    const other = otherChildFor({ subject: 'dog', name: 'Max', favourite: 'ball' }, 1);
    // Its evaluations say how often its stories name the other child; OPD's have no other child.
    for (const s of control.scores) expect(Object.keys(s.rates)).toEqual(expect.arrayContaining(['other:pet', 'other:name']));
    const opd = lines.find((e) => e.type === 'run' && e.arm === 'opd');
    for (const s of opd.scores) expect(s.rates ?? {}).not.toHaveProperty('other:name');

    const records = readJournal(journalPath(join(out, 'opd-other-child-seed1.nsrun'))).records;
    const rewritten = records.filter((x): x is JudgeResultRecord => x.kind === 'judge_result' && x.judgeHint !== undefined);
    expect(rewritten.length).toBeGreaterThan(0);
    for (const x of rewritten) {
      validateRecord(x, 'test');
      expect(x.hintFor).toBe(childLabel(other));
      expect(x.hint).not.toMatch(/\bMax\b/);
    }
    // The rules judge asks for this child's name; the teacher read the other child's.
    expect(rewritten.some((x) => /\bMax\b/.test(x.judgeHint!) && new RegExp(`\\b${other.name}\\b`).test(x.hint!))).toBe(true);
    // OPD's own run keeps the judge's hints.
    const own = readJournal(journalPath(join(out, 'opd-seed1.nsrun'))).records;
    expect(own.some((x) => x.kind === 'judge_result' && (x.judgeHint !== undefined || x.hintFor !== undefined))).toBe(false);

    const md = readFileSync(join(out, 'reproduction.md'), 'utf8');
    expect(md).toContain("| OPD − OPD, another child's hints |");
    expect(md).toContain("other child's name");
    const table = lines.find((e) => e.type === 'table');
    expect(table.rates.columns.map((c: { key: string }) => c.key)).toEqual(expect.arrayContaining(['other:pet', 'other:name']));
  });

  it('refuses the control on a scenario without another child, in one line', async () => {
    const r = await runCli(
      'reproduce',
      '--config',
      configFile('student'),
      '--out',
      join(dir, 'student'),
      '--seeds',
      '1',
      '--methods',
      'opd,combined-other-child',
    );
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/--methods: combined-other-child rewrites hints for another storyteller child; use a storyteller config or leave it out/);
  });
});
