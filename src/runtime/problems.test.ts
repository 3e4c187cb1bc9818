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
    const fromHub = await loadProblems(config({ source: 'gsm8k-hub', count: 36 }), student, readTextFile, hub);
    expect(fromHub.slice(0, 3).map((p) => p.id)).toEqual(['gsm8k/test#677', 'gsm8k/test#1046', 'gsm8k/test#610']);
    const fromFile = await loadProblems(config({ source: 'file', path: testSplit, count: 36 }), student, readTextFile);
    expect(fromFile).toHaveLength(36);
    expect(fromFile[0].question).toMatch(/^Carol and Jennifer are sisters/);
    expect(fromFile.map((p) => p.id.split('#')[1])).toEqual(fromHub.map((p) => p.id.split('#')[1]));
  });

  it('keeps dataset order when asked', async () => {
    const fromHub = await loadProblems(config({ source: 'gsm8k-hub', count: 3, order: 'dataset' }), student, readTextFile, hub);
    expect(fromHub.map((p) => p.id)).toEqual(['gsm8k/test#0', 'gsm8k/test#1', 'gsm8k/test#2']);
    const fromFile = await loadProblems(config({ source: 'file', path: testSplit, count: 2, order: 'dataset' }), student, readTextFile);
    expect(fromFile[0].question).toMatch(/^Janet’s ducks/);
  });

  it('refuses an unknown order, and a file the reference order cannot apply to', async () => {
    const bad = config({ source: 'gsm8k-hub', count: 3, order: 'shuffled' as never });
    expect(() => parseRunConfig(bad)).toThrow(RunConfigError);
    expect(() => parseRunConfig(bad)).toThrow(/problems.order must be "reference"/);
    const small = async () => JSON.stringify([{ question: 'q', answer: '#### 1' }]);
    await expect(loadProblems(config({ source: 'file', path: 'mine.json', count: 1 }), student, small)).rejects.toThrow(ProblemFileError);
    await expect(loadProblems(config({ source: 'file', path: 'mine.json', count: 1, order: 'dataset' }), student, small)).resolves.toHaveLength(1);
  });

  it('names the evaluated set in words, a file by its name only', () => {
    expect(problemSetLabel({ source: 'gsm8k-hub', count: 36 }, student, 36)).toBe(
      "the first 36 of the GSM8K test split in the reference evaluation's order (Gen-Verse/OpenClaw-RL openclaw-test/GSM8K.json (0d034dd))",
    );
    expect(problemSetLabel({ source: 'file', path: '/home/me/data/test.jsonl', count: 36, order: 'dataset' }, student, 36)).toBe(
      'the first 36 problems of test.jsonl in file order',
    );
    expect(problemSetLabel({ source: 'builtin', count: 12 }, student, 12)).toBe('the first 12 built-in problems');
    expect(problemSetLabel({ source: 'builtin', count: 12 }, createScenario({ id: 'storyteller' }), 12)).toBe('the first 12 story openings');
  });
});
