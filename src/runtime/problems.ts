/** The run's problems from its config: built-in, the GSM8K hub split, or a local file. */
import type { Problem } from '../sims/problems/problem';
import {
  BUILT_IN_PROBLEMS,
  fetchGsm8kFromHub,
  inReferenceOrder,
  parseProblemsText,
  REFERENCE_ORDER_SOURCE,
  storyOpenings,
  type ProblemOrder,
} from '../sims/problems/index';
import type { Scenario } from '../sims/scenarios/index';
import type { RunConfig } from './run-config';

/**
 * The problems part of a personal-track config. Without `order`, GSM8K problems (hub or file)
 * come in the reference evaluation's order, so a student or teacher evaluation scores the
 * reference's problems; 'dataset' keeps the split's or the file's own order (parseRunConfig
 * checks it). Built-in problems have one order.
 */
export type ProblemsSpec = RunConfig['problems'];

/** The GSM8K order a config asks for (absent: the reference's). */
export function problemOrder(spec: ProblemsSpec): ProblemOrder {
  return spec.order ?? 'reference';
}

export async function loadProblems(
  config: RunConfig,
  scenario: Scenario,
  readFile: (path: string) => Promise<string>,
  fetchFn?: typeof fetch,
): Promise<Problem[]> {
  const spec: ProblemsSpec = config.problems;
  const { source, count, path } = spec;
  const order = problemOrder(spec);
  let problems: Problem[];
  if (scenario.problemSource === 'story-openings') {
    problems = storyOpenings(scenario.config.id === 'storyteller' ? (scenario.config.subject ?? 'dog') : 'dog');
  } else if (source === 'gsm8k-hub') {
    problems = await fetchGsm8kFromHub(count, { fetch: fetchFn, order });
  } else if (source === 'file') {
    if (!path) throw new Error('problems.path is required when problems.source is "file"');
    const inFile = parseProblemsText(await readFile(path), path);
    problems = order === 'reference' ? inReferenceOrder(inFile, path) : inFile;
  } else {
    problems = [...BUILT_IN_PROBLEMS];
  }
  return problems.slice(0, count);
}

/** What an evaluation of the first `n` problems scored, in words, for its record. */
export function problemSetLabel(spec: ProblemsSpec, scenario: Scenario, n: number): string {
  const first = `the first ${n}`;
  if (scenario.problemSource === 'story-openings') return `${first} story openings`;
  if (spec.source === 'builtin') return `${first} built-in problems`;
  // A file by its name only: a record never carries a local path.
  const file = spec.path?.split(/[\\/]/).pop() ?? 'file';
  if (problemOrder(spec) === 'dataset')
    return spec.source === 'file' ? `${first} problems of ${file} in file order` : `${first} of the GSM8K test split in dataset order`;
  const where = spec.source === 'file' ? `GSM8K test split (${file})` : 'GSM8K test split';
  return `${first} of the ${where} in the reference evaluation's order (${REFERENCE_ORDER_SOURCE})`;
}
