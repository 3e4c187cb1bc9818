/**
 * A stop that lands during the last evaluation: every step has run, but the evaluation that
 * closes the run is dropped, so the run is "stopped", not "finished" (a finished run has its
 * final score).
 */
import { expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, plainSentencesConfig, plainSentencesUser, validatingSink } from '../../test/support/runtime/headless';
import { CpuBackend } from '../gpu/cpu/backend';
import { createScenario } from '../sims/scenarios/index';
import type { TextGenerator } from '../generators/generator';
import type { RunRecord } from '../rl/records';
import { loadProblems } from './problems';
import { parseRunConfig } from './run-config';
import { RunLoop } from './runloop';
import { createNodeServices, readTextFile } from './services-node';

it('a stop during the evaluation after the last step leaves the run stopped, without that evaluation', async () => {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const config = plainSentencesConfig(dir, { concurrentSessions: 2, steps: 1, batchSize: 2, maxNewTokens: 4 });
  config.schedule.evalEvery = 1;
  const records: RunRecord[] = [];
  const services = await createNodeServices(parseRunConfig(config), new CpuBackend());
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  let loop: RunLoop | null = null;
  // The evaluator stops the run when it is asked to grade after the training step.
  const evaluator: TextGenerator = {
    kind: 'rules',
    label: 'stopping evaluator',
    generate: async (_messages, opts) => {
      if (records.some((r) => r.kind === 'train_step')) loop?.stop();
      // As an endpoint does: a request whose signal is aborted fails with an AbortError.
      opts?.signal?.throwIfAborted();
      return '{"score": 5}';
    },
  };
  loop = new RunLoop(config, { ...services, user: plainSentencesUser, evaluator }, problems, validatingSink(records));
  const result = await loop.run();
  expect(of(records, 'train_step')).toHaveLength(1);
  expect(of(records, 'evaluation').map((e) => e.step ?? 0)).toEqual([0]);
  expect(result).toMatchObject({ status: 'stopped', step: 1 });
}, 60_000);
