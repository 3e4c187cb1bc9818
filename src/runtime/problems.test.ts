/** A run's problems: GSM8K comes in the reference evaluation's order unless the config asks for dataset order. */
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { ProblemFileError } from '../sims/problems/problem';
import { createScenario } from '../sims/scenarios/index';
import { loadProblems, problemSetLabel, type ProblemsSpec } from './problems';
import { exampleConfig, parseRunConfig, RunConfigError, type RunConfig } from './run-config';
import { readTextFile } from './services-node';

const testSplit = dataPath('data/gsm8k/test.jsonl');
const student = createScenario({ id: 'student' });

function config(problems: ProblemsSpec): RunConfig {
  return { ...exampleConfig('student', 'model'), problems };
}

/** A datasets server whose row i has question "q<i>". */
const hub = (async (input: string | URL | Request) => {
  const url = new URL(String(input));
  const offset = Number(url.searchParams.get('offset'));
  const rows = Array.from({ length: Number(url.searchParams.get('length')) }, (_, i) => ({
    row_idx: offset + i,
    row: { question: `q${offset + i}`, answer: '#### 1' },
  }));
  return new Response(JSON.stringify({ rows }));
}) as typeof fetch;

describe('loadProblems', () => {
  it('takes the reference evaluation’s 36 problems by default, from the hub or from a file', async () => {
    const fromHub = (await loadProblems(config({ source: 'gsm8k-hub', count: 36 }), student, readTextFile, hub)).evaluation;
    expect(fromHub.slice(0, 3).map((p) => p.id)).toEqual(['gsm8k/test#677', 'gsm8k/test#1046', 'gsm8k/test#610']);
    const fromFile = (await loadProblems(config({ source: 'file', path: testSplit, count: 36 }), student, readTextFile)).evaluation;
    expect(fromFile).toHaveLength(36);
    expect(fromFile[0].question).toMatch(/^Carol and Jennifer are sisters/);
    expect(fromFile.map((p) => p.id.split('#')[1])).toEqual(fromHub.map((p) => p.id.split('#')[1]));
  });

  it('trains on the problems after the evaluated ones by default, and on the evaluated ones when shared', async () => {
    const held = await loadProblems(config({ source: 'file', path: testSplit, count: 20 }), student, readTextFile);
    expect(held.evaluation).toHaveLength(36);
    expect(held.train).toHaveLength(20);
    const scored = new Set(held.evaluation.map((p) => p.id));
    expect(held.train.some((p) => scored.has(p.id))).toBe(false);
    const shared = await loadProblems(config({ source: 'file', path: testSplit, count: 20, split: 'shared' }), student, readTextFile);
    expect(shared.train.map((p) => p.id)).toEqual(held.evaluation.slice(0, 20).map((p) => p.id));
    const story = createScenario({ id: 'storyteller', subject: 'cat' });
    const openings = await loadProblems({ ...exampleConfig('storyteller'), scenario: story.config }, story, readTextFile);
    expect(openings.train.map((p) => p.question)).not.toContain(openings.evaluation[0].question);
    expect(openings.train[0].question).toBe('Once upon a time, there was a happy cat.');
    const builtin = config({ source: 'builtin', count: 12 });
    await expect(loadProblems(builtin, student, readTextFile)).rejects.toThrow(/leaving none to train on; lower schedule.evalProblems/);
  });

  it('keeps dataset order when asked', async () => {
    const fromHub = (await loadProblems(config({ source: 'gsm8k-hub', count: 3, order: 'dataset' }), student, readTextFile, hub)).evaluation;
    expect(fromHub.slice(0, 3).map((p) => p.id)).toEqual(['gsm8k/test#0', 'gsm8k/test#1', 'gsm8k/test#2']);
    const fromFile = (await loadProblems(config({ source: 'file', path: testSplit, count: 2, order: 'dataset' }), student, readTextFile)).evaluation;
    expect(fromFile[0].question).toMatch(/^Janet’s ducks/);
  });

  it('refuses an unknown order, and a file the reference order cannot apply to', async () => {
    const bad = config({ source: 'gsm8k-hub', count: 3, order: 'shuffled' as never });
    expect(() => parseRunConfig(bad)).toThrow(RunConfigError);
    expect(() => parseRunConfig(bad)).toThrow(/problems.order must be "reference"/);
    const small = async () => JSON.stringify([{ question: 'q', answer: '#### 1' }]);
    await expect(loadProblems(config({ source: 'file', path: 'mine.json', count: 1 }), student, small)).rejects.toThrow(ProblemFileError);
    await expect(
      loadProblems(config({ source: 'file', path: 'mine.json', count: 1, order: 'dataset', split: 'shared' }), student, small),
    ).resolves.toMatchObject({
      train: [{ question: 'q' }],
    });
  });

  it('names the evaluated set in words, a file by its name only', () => {
    expect(problemSetLabel({ source: 'gsm8k-hub', count: 36 }, student, 36)).toBe(
      "the first 36 of the GSM8K test split in the reference evaluation's order (Gen-Verse/OpenClaw-RL openclaw-test/GSM8K.json (0d034dd)), not trained on (training uses the problems after them)",
    );
    expect(problemSetLabel({ source: 'file', path: '/home/me/data/test.jsonl', count: 36, order: 'dataset' }, student, 36)).toBe(
      'the first 36 problems of test.jsonl in file order, not trained on (training uses the problems after them)',
    );
    expect(problemSetLabel({ source: 'builtin', count: 12, split: 'shared' }, student, 12)).toBe('the first 12 built-in problems, also trained on');
    expect(problemSetLabel({ source: 'builtin', count: 12 }, createScenario({ id: 'storyteller' }), 12)).toBe(
      "the first 12 evaluation story openings (held out of training and of the demo model's fine-tuning)",
    );
  });
});
