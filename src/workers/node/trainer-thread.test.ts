import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { CpuBackend } from '../../gpu/cpu/backend';
import { PEFT_WEIGHTS } from '../../gpu/peft';
import { exampleConfig, type RunConfig } from '../../runtime/run-config';
import type { EnginePolicyService, TrainItem } from '../../runtime/policy-service';
import { loadEnginePolicy } from '../../runtime/services-node';
import { tinyModel } from '../../../test/fixtures/tiny-model';
import { until } from '../../../test/support/cli/serve';
import { spawnTrainer, TrainerExitedError, TrainerStartError, TrainerStepError, TrainerThread, type TrainerThreadOptions } from './trainer-thread';

const threads: TrainerThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.close()));
});

async function setup(): Promise<{ config: RunConfig; here: EnginePolicyService; items: TrainItem[] }> {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const config = { ...exampleConfig('student', dir) };
  config.models.policy = { ...config.models.policy, backend: 'cpu-reference' };
  const here = await loadEnginePolicy(config, new CpuBackend());
  const messages = [{ role: 'user' as const, content: 'Write a short poem about cats.' }];
  const [reply] = await here.generate([{ messages, maxNewTokens: 6, sampling: { temperature: 1, topP: 1, topK: 0 }, seed: 7 }]);
  const items = [-1, 1].map((a) => ({
    messages,
    tokenIds: reply.tokenIds,
    advantages: reply.tokenIds.map(() => a),
    rolloutLogp: reply.logprobs,
    trainable: true,
  }));
  return { config, here, items };
}

function thread(o: TrainerThreadOptions): TrainerThread {
  const t = new TrainerThread(o);
  threads.push(t);
  return t;
}

describe('serve’s trainer thread', () => {
  it('makes the same adapter and statistics as the same step on this thread, from the adapter restored before it started', async () => {
    const { config, here, items } = await setup();
    // A resumed run: the serving thread restores version 3 before the first step starts the worker.
    await here.train(items);
    const restored = await here.exportAdapter();
    await here.restore(restored, 3);
    const beside = thread({ config, backend: 'cpu-reference' });
    await beside.restore(restored, 3);

    const progress: number[] = [];
    const step = await beside.train(items, (i) => progress.push(i));
    const local = await here.train(items);
    expect(step.version).toBe(4);
    expect(local.version).toBe(4);
    expect(progress).toEqual([0]);
    const { stepMs: _a, ...stats } = step.stats;
    const { stepMs: _b, ...localStats } = local.stats;
    expect(stats).toEqual(localStats);
    expect(step.adapter[PEFT_WEIGHTS]).toEqual((await here.exportAdapter())[PEFT_WEIGHTS]);
  });

  it('passes on a step’s failure with the engine’s message; a worker that cannot load or that stops says so', async () => {
    const { config, items } = await setup();
    const beside = thread({ config, backend: 'cpu-reference' });
    const broken = [{ ...items[0], advantages: [1] }];
    await expect(beside.train(broken)).rejects.toThrow(TrainerStepError);
    await expect(beside.train(broken)).rejects.toThrow(/EngineError: sample 0: 1 advantages for \d+ completion tokens/);

    const missing = { ...config, models: { ...config.models, policy: { ...config.models.policy, model: '/nonexistent/model' } } };
    await expect(thread({ config: missing, backend: 'cpu-reference' }).train(items)).rejects.toThrow(TrainerStartError);

    // A worker that stops during a step (as one killed for memory would).
    const hold = new Int32Array(new SharedArrayBuffer(8));
    hold[0] = 1;
    let worker: Worker | undefined;
    const stopping = thread({
      config,
      backend: 'cpu-reference',
      hold,
      spawn: (init) => (worker = spawnTrainer(init)),
    });
    const step = stopping.train(items);
    await until(() => Atomics.load(hold, 1) === 1, 60_000, 'the worker inside the step');
    void worker!.terminate();
    await expect(step).rejects.toThrow(TrainerExitedError);
  });

  it('ends a step whose worker is still loading when the thread is closed, with an AbortError', async () => {
    // Serve stopped (Ctrl-C, a test's SIGTERM) just after its first step started the worker: the
    // step waited for the worker to be ready, then was sent to a worker being terminated, and
    // nothing ever answered it, so the run loop and the server never ended.
    const { config, items } = await setup();
    const beside = thread({ config, backend: 'cpu-reference' });
    const step = beside.train(items);
    let outcome: unknown = 'pending';
    step.then(
      () => (outcome = 'trained'),
      (e) => (outcome = e),
    );
    await beside.close();
    await until(() => outcome !== 'pending', 60_000, 'the step in flight to end after close');
    expect(outcome).toBeInstanceOf(DOMException);
    expect((outcome as DOMException).name).toBe('AbortError');
  });

  it('leaves the steps to the serving thread once it is unavailable, and says why once', async () => {
    const { config, here, items } = await setup();
    const heard: Error[] = [];
    here.trainBeside(
      thread({
        config,
        backend: 'cpu-reference',
        spawn: () => {
          throw new Error('no threads here');
        },
      }),
      (e) => heard.push(e),
    );
    expect(here.trainsBeside).toBe(true);
    expect((await here.train(items)).version).toBe(1);
    expect((await here.train(items)).version).toBe(2);
    expect(here.trainsBeside).toBe(false);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(TrainerStartError);
  });
});
