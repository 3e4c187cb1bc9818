/** The run's problems from its config: built-in, the GSM8K hub split, or a local file. */
import type { Problem } from '../../sims/problems/problem';
import { BUILT_IN_PROBLEMS, fetchGsm8kFromHub, parseProblemsText, storyOpenings } from '../../sims/problems/index';
import type { Scenario } from '../../sims/scenarios/index';
import type { RunConfig } from './run-config';

export async function loadProblems(
  config: RunConfig,
  scenario: Scenario,
  readFile: (path: string) => Promise<string>,
  fetchFn?: typeof fetch,
): Promise<Problem[]> {
  const { source, count, path } = config.problems;
  let problems: Problem[];
  if (scenario.problemSource === 'story-openings') {
    problems = storyOpenings(scenario.config.id === 'storyteller' ? (scenario.config.subject ?? 'dog') : 'dog');
  } else if (source === 'gsm8k-hub') {
    problems = await fetchGsm8kFromHub(count, { fetch: fetchFn });
  } else if (source === 'file') {
    if (!path) throw new Error('problems.path is required when problems.source is "file"');
    problems = parseProblemsText(await readFile(path), path);
  } else {
    problems = [...BUILT_IN_PROBLEMS];
  }
  return problems.slice(0, count);
}
