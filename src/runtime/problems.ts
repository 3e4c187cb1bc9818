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

/**
 * The problems a run trains on and the ones its personalization score is taken on. Held out (the
 * default), the two are disjoint: the storyteller's sessions start from the training openings and
 * its score is taken on the evaluation openings; GSM8K runs score the first `evalProblems` of the
 * order (the reference's 36) and train on the `count` problems after them. Shared, sessions cycle
 * the evaluated problems themselves (the reference's own runs do so), which a claim of learning
 * cannot rest on. Tuning, the score is taken on the training problems: a sweep of settings then
 * never looks at the evaluation set it is later judged on.
 */
export interface ProblemSets {
  train: Problem[];
  evaluation: Problem[];
}

export type ProblemSplit = NonNullable<ProblemsSpec['split']>;

/** The split a config asks for (absent: held out). */
export function problemSplit(spec: ProblemsSpec): ProblemSplit {
  return spec.split ?? 'held-out';
}

/** One list for both roles: tests and sources with one set of problems. */
export function sharedProblems(problems: Problem[]): ProblemSets {
  return { train: problems, evaluation: problems };
}

export async function loadProblems(
  config: RunConfig,
  scenario: Scenario,
  readFile: (path: string) => Promise<string>,
  fetchFn?: typeof fetch,
): Promise<ProblemSets> {
  const spec: ProblemsSpec = config.problems;
  const { source, count, path } = spec;
  const order = problemOrder(spec);
  const split = problemSplit(spec);
  const heldOut = split !== 'shared';
  if (scenario.problemSource === 'story-openings') {
    const subject = scenario.config.id === 'storyteller' ? (scenario.config.subject ?? 'dog') : 'dog';
    const evaluation = storyOpenings(subject, 'evaluation');
    const training = storyOpenings(subject, 'training');
    if (split === 'tuning') return { train: training.slice(0, count), evaluation: training };
    return { train: (heldOut ? training : evaluation).slice(0, count), evaluation };
  }
  const evalCount = config.schedule.evalEvery > 0 ? config.schedule.evalProblems : 0;
  const wanted = heldOut ? evalCount + count : Math.max(count, evalCount);
  let problems: Problem[];
  if (source === 'gsm8k-hub') {
    problems = await fetchGsm8kFromHub(wanted, { fetch: fetchFn, order });
  } else if (source === 'file') {
    if (!path) throw new Error('problems.path is required when problems.source is "file"');
    const inFile = parseProblemsText(await readFile(path), path);
    problems = order === 'reference' ? inReferenceOrder(inFile, path) : inFile;
  } else {
    problems = [...BUILT_IN_PROBLEMS];
  }
  if (!heldOut) {
    const train = problems.slice(0, count);
    return { train, evaluation: problems.slice(0, evalCount) };
  }
  const train = problems.slice(evalCount, evalCount + count);
  const sets = { evaluation: split === 'tuning' ? train.slice(0, evalCount) : problems.slice(0, evalCount), train };
  if (count > 0 && sets.train.length === 0 && problems.length > 0) {
    throw new Error(
      `the ${source} problems number ${problems.length} and the evaluation takes the first ${evalCount}, leaving none to train on; ` +
        'lower schedule.evalProblems, load more problems, or set problems.split to "shared"',
    );
  }
  return sets;
}

/** What an evaluation of the first `n` problems scored, in words, for its record. */
export function problemSetLabel(spec: ProblemsSpec, scenario: Scenario, n: number): string {
  const first = `the first ${n}`;
  if (scenario.problemSource === 'story-openings') {
    const split = problemSplit(spec);
    if (split === 'tuning') return `${first} training story openings (problems.split "tuning": the evaluation openings are not looked at)`;
    return split === 'held-out'
      ? `${first} evaluation story openings (held out of training and of the demo model's fine-tuning)`
      : `${first} evaluation story openings (also trained on: problems.split "shared")`;
  }
  const split = problemSplit(spec);
  if (split === 'tuning') return `${first} training problems (problems.split "tuning"), after the evaluation's own`;
  const training = split === 'held-out' ? ', not trained on (training uses the problems after them)' : ', also trained on';
  return problemsLabel(spec, first) + training;
}

function problemsLabel(spec: ProblemsSpec, first: string): string {
  if (spec.source === 'builtin') return `${first} built-in problems`;
  // A file by its name only: a record never carries a local path.
  const file = spec.path?.split(/[\\/]/).pop() ?? 'file';
  if (problemOrder(spec) === 'dataset')
    return spec.source === 'file' ? `${first} problems of ${file} in file order` : `${first} of the GSM8K test split in dataset order`;
  const where = spec.source === 'file' ? `GSM8K test split (${file})` : 'GSM8K test split';
  return `${first} of the ${where} in the reference evaluation's order (${REFERENCE_ORDER_SOURCE})`;
}
