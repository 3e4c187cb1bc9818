/**
 * The tool-call track's problems: the first `problems.count` of the source train the policy,
 * the `toolcall.evalHeldOut` after them are held out for the accuracy evaluation, so no
 * evaluation problem is ever trained on. Built-in problems, the GSM8K hub's test split (the
 * first count + evalHeldOut rows), or a local .jsonl/.json file.
 */
import { BUILT_IN_PROBLEMS, fetchGsm8kFromHub, Gsm8kAnswerError, parseGsm8kAnswer, parseProblemsText } from '../../sims/problems/index';
import type { Problem } from '../../sims/problems/problem';
import type { ToolCallRunConfig } from '../run-config';
import type { ToolCallProblems } from './loop';

/** Splits a source's problems into training problems and the held-out slice after them. */
export function splitHeldOut(problems: readonly Problem[], count: number, heldOut: number): ToolCallProblems {
  return { train: problems.slice(0, count), heldOut: problems.slice(count, count + heldOut) };
}

/**
 * @throws Gsm8kAnswerError naming the problem whose answer lacks `#### N` (outcomes need it);
 *   Error when the source has no problems left for a requested held-out slice
 */
export async function loadToolCallProblems(
  config: ToolCallRunConfig,
  readFile: (path: string) => Promise<string>,
  fetchFn?: typeof fetch,
): Promise<ToolCallProblems> {
  const { source, count, path } = config.problems;
  const wanted = count + config.toolcall.evalHeldOut;
  let problems: Problem[];
  if (source === 'gsm8k-hub') {
    problems = await fetchGsm8kFromHub(wanted, { fetch: fetchFn });
  } else if (source === 'file') {
    if (!path) throw new Error('problems.path is required when problems.source is "file"');
    problems = parseProblemsText(await readFile(path), path);
  } else {
    problems = [...BUILT_IN_PROBLEMS];
  }
  const split = splitHeldOut(problems, count, config.toolcall.evalHeldOut);
  for (const p of [...split.train, ...split.heldOut]) {
    try {
      parseGsm8kAnswer(p.answer);
    } catch (e) {
      if (e instanceof Gsm8kAnswerError) throw new Gsm8kAnswerError(`problem ${p.id}: ${e.message}`);
      throw e;
    }
  }
  if (config.schedule.evalEvery > 0 && config.toolcall.evalHeldOut > 0 && split.heldOut.length === 0) {
    throw new Error(
      `the ${source} source has ${problems.length} problems and problems.count takes ${Math.min(count, problems.length)} for training, ` +
        'leaving none for the held-out evaluation; lower problems.count or load more problems',
    );
  }
  return split;
}
