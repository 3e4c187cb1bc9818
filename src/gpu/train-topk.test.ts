/**
 * The top-k distillation term in the engine's step (stories260K, CPU reference backend): the set
 * members' log-probs are gathered from the same logits as the sampled token's and their gradient
 * joins its in the logits' backward. A one-member set is sampled-token OPD with the clipped
 * difference as advantage, so both must give the same update; a larger set teaches a token the
 * policy did not write. On the fast CPU backend a set is gathered in one pass over the logits
 * (gather-columns.ts), with the same update.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from './cpu/backend';
import { FastCpuBackend } from './cpu-fast/backend';
import { nodeThreads } from './cpu-fast/threads-node';
import { LoraAdapter } from './lora';
import { Policy } from './policy';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { LoraTrainer } from './train';
import { DEFAULT_TRAIN, type TrainSample } from './train-types';

const stories = dataPath('models/stories260K');

describe('top-k OPD term in a training step on stories260K', () => {
  let policy: Policy;
  let prompt: number[];
  let completion: number[];

  beforeAll(async () => {
    policy = await Policy.load(new DirSource(stories), new CpuBackend());
    prompt = policy.promptIds('Once upon a time');
    completion = policy.tokenizer.encode(' there was a dog named Max. Max liked to run.', false);
  });

  const fresh = () => LoraAdapter.init(policy.model.backend, policy.config, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] }, 5);
  const settings = { ...DEFAULT_TRAIN, lr: 2e-3, weightDecay: 0 };
  const values = (a: LoraAdapter) => Promise.all(a.parameters().map((p) => policy.model.backend.read(p.tensor)));
  const logpOf = async (adapter: LoraAdapter, at: number, id: number) =>
    (await score(policy.model, [{ prompt, completion: [...completion.slice(0, at), id] }], { lora: adapter }))[0].logprobs[at];

  it('a one-member set (the sampled token) gives the update of sampled-token OPD with clip(teacher - old), over several logits chunks', async () => {
    const old = Array.from((await score(policy.model, [{ prompt, completion }]))[0].logprobs);
    const diffs = [2.5, -0.3, 1.4, -3];
    const teacher = old.map((x, t) => x + diffs[t % 4]);
    const w = 0.8;
    const clip = 1;
    const c = (x: number) => Math.min(clip, Math.max(-clip, x));
    const other: TrainSample = { prompt, completion: completion.slice(0, 5), advantages: [1, -1, 1, -1, 1] };
    const chunked = { ...settings, logitsChunkFloats: policy.config.vocabSize * 3 };
    const viaTopK = fresh();
    await new LoraTrainer(policy.model, viaTopK, chunked).trainStep([
      {
        prompt,
        completion,
        advantages: completion.map(() => 0),
        opdTopK: { weight: w, clip, ids: completion.map((id) => [id]), teacherLogp: teacher.map((x) => [x]) },
      },
      other,
    ]);
    const viaSampled = fresh();
    await new LoraTrainer(policy.model, viaSampled, chunked).trainStep([{ prompt, completion, advantages: teacher.map((x, t) => w * c(x - old[t])) }, other]);
    const [a, b] = [await values(viaTopK), await values(viaSampled)];
    a.forEach((t, i) => t.forEach((x, j) => expect(x).toBeCloseTo(b[i][j], 6)));
    const init = await values(fresh());
    expect(a.some((t, i) => t.some((x, j) => x !== init[i][j]))).toBe(true);
  });

  it('teaches a token the policy did not write, which sampled-token OPD cannot reach', async () => {
    const at = 4;
    const written = completion[at];
    // The token the teacher prefers at `at`: one the completion does not have there.
    const unsampled = policy.tokenizer.encode(' cat', false)[0];
    expect(unsampled).not.toBe(written);
    const adapter = fresh();
    const trainer = new LoraTrainer(policy.model, adapter, settings);
    const before = await logpOf(adapter, at, unsampled);
    for (let step = 0; step < 3; step++) {
      const old = Array.from((await score(policy.model, [{ prompt, completion }], { lora: adapter }))[0].logprobs);
      const unsampledNow = await logpOf(adapter, at, unsampled);
      const stats = await trainer.trainStep([
        {
          prompt,
          completion,
          advantages: completion.map(() => 0),
          opdTopK: {
            weight: 1,
            clip: 1,
            // Every other position's set is its written token alone, with the teacher agreeing.
            ids: completion.map((id, t) => (t === at ? [written, unsampled] : [id])),
            teacherLogp: old.map((x, t) => (t === at ? [x - 1, unsampledNow + 1] : [x])),
          },
        },
      ]);
      expect(stats.skipped).toBeNull();
      expect(stats.gradNorm).toBeGreaterThan(0);
    }
    expect(await logpOf(adapter, at, unsampled)).toBeGreaterThan(before + 0.05);
  });

  it("gives the reference's update on the fast CPU backend, which gathers a set in one pass over the logits", async () => {
    const fastPolicy = await Policy.load(new DirSource(stories), await FastCpuBackend.create({ ...nodeThreads(), threads: 2 }));
    const ids = completion.map((id, t) => [id, (id + 7 + t) % policy.config.vocabSize, (id + 31) % policy.config.vocabSize]);
    const sample: TrainSample = {
      prompt,
      completion,
      advantages: completion.map(() => 0),
      opdTopK: { weight: 1, clip: 1, ids, teacherLogp: ids.map((set) => set.map((_, j) => -1 - j)) },
    };
    const step = async (p: Policy) => {
      const adapter = LoraAdapter.init(p.model.backend, p.config, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] }, 5);
      await new LoraTrainer(p.model, adapter, settings).trainStep([sample]);
      return Promise.all(adapter.parameters().map((x) => p.model.backend.read(x.tensor)));
    };
    const [want, got] = [await step(policy), await step(fastPolicy)];
    got.forEach((t, i) => t.forEach((x, j) => expect(x).toBeCloseTo(want[i][j], 5)));
    (fastPolicy.model.backend as FastCpuBackend).close();
  });

  it('refuses a top-k term with fixed old log-probs or a set per token missing', async () => {
    const trainer = new LoraTrainer(policy.model, fresh(), settings);
    const opdTopK = { weight: 1, clip: 0, ids: completion.map((id) => [id]), teacherLogp: completion.map(() => [-1]) };
    const x: TrainSample = { prompt, completion, advantages: completion.map(() => 0), opdTopK };
    await expect(trainer.trainStep([{ ...x, oldLogp: completion.map(() => -1) }])).rejects.toThrow(/fixed old log-probs/);
    await expect(trainer.trainStep([{ ...x, opdTopK: { ...opdTopK, ids: opdTopK.ids.slice(1) } }])).rejects.toThrow(/top-k sets/);
  });
});
