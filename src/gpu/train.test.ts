/** The update step's direction on a real pretrained model (stories260K), CPU reference backend. */
import { beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from './cpu/backend';
import { generate } from './generate';
import { LoraAdapter } from './lora';
import { Policy } from './policy';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { LoraTrainer } from './train';
import { DEFAULT_TRAIN, type TrainSample } from './train-types';

const stories = dataPath('models/stories260K');
const mean = (xs: ArrayLike<number>) => Array.from(xs).reduce((a, b) => a + b, 0) / xs.length;

describe('PPO steps on stories260K', () => {
  let policy: Policy;
  let prompt: number[];
  let completion: number[];

  beforeAll(async () => {
    policy = await Policy.load(new DirSource(stories), new CpuBackend());
    prompt = policy.promptIds('Once upon a time');
    completion = policy.tokenizer.encode(' there was a dog named Max. Max liked to run.', false);
  });

  const fresh = (seed = 1) =>
    LoraAdapter.init(policy.model.backend, policy.config, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'o_proj', 'down_proj'] }, seed);
  const meanLogp = async (adapter: LoraAdapter) => mean((await score(policy.model, [{ prompt, completion }], { lora: adapter }))[0].logprobs);
  const sample = (a: number): TrainSample => ({ prompt, completion, advantages: completion.map(() => a) });
  const settings = { ...DEFAULT_TRAIN, lr: 2e-3, weightDecay: 0 };

  it('a fresh adapter (B = 0) is the base model', async () => {
    const base = mean((await score(policy.model, [{ prompt, completion }]))[0].logprobs);
    expect(await meanLogp(fresh())).toBeCloseTo(base, 6);
  });

  it('A = +1 raises the completion log-prob, A = -1 lowers it', async () => {
    for (const [a, sign] of [
      [1, 1],
      [-1, -1],
    ] as const) {
      const adapter = fresh();
      const before = await meanLogp(adapter);
      const trainer = new LoraTrainer(policy.model, adapter, settings);
      for (let i = 0; i < 3; i++) {
        const stats = await trainer.trainStep([sample(a)]);
        expect(stats.skipped).toBeNull();
        expect(stats.gradNorm).toBeGreaterThan(0);
      }
      const after = await meanLogp(adapter);
      expect(Math.sign(after - before)).toBe(sign);
      expect(Math.abs(after - before)).toBeGreaterThan(0.01);
    }
  });

  it('A = 0 with beta = 0 gives zero gradients and leaves the adapter unchanged', async () => {
    const adapter = fresh();
    const before = await Promise.all(adapter.parameters().map((p) => policy.model.backend.read(p.tensor)));
    const trainer = new LoraTrainer(policy.model, adapter, settings);
    const stats = await trainer.trainStep([sample(0)]);
    expect(stats.gradNorm).toBe(0);
    const after = await Promise.all(adapter.parameters().map((p) => policy.model.backend.read(p.tensor)));
    after.forEach((t, i) => expect(Array.from(t)).toEqual(Array.from(before[i])));
  });

  it('a masked sample adds no loss, gradient, token or statistic, with the KL term on', async () => {
    const be = policy.model.backend;
    // One step off the base model first, so the KL to it and its gradient are not zero.
    const moved = fresh(7);
    await new LoraTrainer(policy.model, moved, settings).trainStep([sample(1)]);
    const step = async (batch: TrainSample[], aggregation: 'token-mean' | 'sample-mean') => {
      const adapter = await moved.clone(be);
      const stats = await new LoraTrainer(policy.model, adapter, { ...settings, klCoef: 0.5, aggregation }).trainStep(batch, { scoreAfter: true });
      return { stats, values: await Promise.all(adapter.parameters().map((p) => be.read(p.tensor))) };
    };
    const short = completion.slice(0, 6);
    // Zero advantages (what a mask used to become) and a rollout far off, to show in the gap if counted.
    const masked: TrainSample = { prompt, completion: short, advantages: short.map(() => 0), rolloutLogp: short.map(() => -50), trainable: false };
    const alone = await step([{ ...sample(1), rolloutLogp: completion.map(() => -1) }], 'token-mean');
    const withMasked = await step([{ ...sample(1), rolloutLogp: completion.map(() => -1) }, masked], 'token-mean');
    expect(alone.stats.kl).toBeGreaterThan(0);
    for (const key of ['loss', 'policyLoss', 'kl', 'entropy', 'meanAbsAdv', 'gradNorm', 'tokens', 'clipFracLow', 'clipFracHigh', 'rolloutGap'] as const) {
      expect(withMasked.stats[key], key).toBeCloseTo(alone.stats[key]!, 6);
    }
    withMasked.values.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - alone.values[i][j])).toBeLessThan(1e-7)));
    expect(withMasked.stats.perSample![1]).toBeNull();
    // Under sample-mean the masked sample is still a slot of the batch: everything halves.
    const slotAlone = await step([sample(1)], 'sample-mean');
    const slotMasked = await step([sample(1), masked], 'sample-mean');
    expect(slotMasked.stats.loss).toBeCloseTo(slotAlone.stats.loss / 2, 6);
    expect(slotMasked.stats.gradNorm).toBeCloseTo(slotAlone.stats.gradNorm / 2, 6);
    expect(slotMasked.stats.tokens).toBe(slotAlone.stats.tokens);
  });

  it('a loss mask: observation tokens of a trajectory sample add no gradient, advantage or statistic', async () => {
    const be = policy.model.backend;
    const step = async (x: TrainSample) => {
      const adapter = fresh(3);
      const stats = await new LoraTrainer(policy.model, adapter, { ...settings, klCoef: 0.5, klType: 'k3' }).trainStep([x], { scoreAfter: true });
      return { stats, values: await Promise.all(adapter.parameters().map((p) => be.read(p.tensor))) };
    };
    // Step 0 (3 tokens, A = +1), a tool output (4 tokens, masked), step 1 (2 tokens, A = -1).
    const ids = completion.slice(0, 9);
    const lossMask = [1, 1, 1, 0, 0, 0, 0, 1, 1];
    const advantages = [1, 1, 1, 0, 0, 0, 0, -1, -1];
    const rolloutLogp = ids.map(() => -1);
    const clean = await step({ prompt, completion: ids, advantages, rolloutLogp, lossMask });
    // Huge advantages and a far-off rollout log-prob on the masked tokens change nothing.
    const wild = await step({
      prompt,
      completion: ids,
      advantages: advantages.map((a, t) => (lossMask[t] ? a : 1e4 * (t % 2 ? 1 : -1))),
      rolloutLogp: rolloutLogp.map((r, t) => (lossMask[t] ? r : -50)),
      lossMask,
    });
    for (const key of ['loss', 'policyLoss', 'kl', 'entropy', 'meanAbsAdv', 'gradNorm', 'tokens', 'rolloutGap'] as const) {
      expect(wild.stats[key], key).toBeCloseTo(clean.stats[key]!, 9);
    }
    wild.values.forEach((t, i) => t.forEach((x, j) => expect(x).toBe(clean.values[i][j])));
    // On-policy (rho = 1, a fresh adapter's KL is 0): -(3 x 1 + 2 x -1) / 5 policy tokens.
    expect(clean.stats.policyLoss).toBeCloseTo(-0.2, 9);
    expect(clean.stats.tokens).toBe(5);
    expect(clean.stats.meanAbsAdv).toBeCloseTo(1, 9);
    expect(wild.stats.perSample![0]!.advantages).toEqual(advantages);
    // Without the mask the same sample trains its observation tokens: another update.
    const unmasked = await step({ prompt, completion: ids, advantages, rolloutLogp });
    expect(unmasked.stats.tokens).toBe(9);
    expect(Math.abs(unmasked.stats.gradNorm - clean.stats.gradNorm)).toBeGreaterThan(1e-6);
  });

  it('refuses a loss mask that does not cover the completion', async () => {
    const trainer = new LoraTrainer(policy.model, fresh(), settings);
    await expect(trainer.trainStep([{ ...sample(1), lossMask: [1, 0] }])).rejects.toThrow(/loss mask has 2 entries/);
  });

  it('clipping stops the update once rho leaves the band, in the direction of A only', async () => {
    const adapter = fresh();
    const current = (await score(policy.model, [{ prompt, completion }], { lora: adapter }))[0].logprobs;
    // old = current - 1, so rho = e > 1 + 0.28 on every token.
    const oldLogp = Array.from(current, (x) => x - 1);
    const trainer = new LoraTrainer(policy.model, adapter, settings);
    const up = await trainer.trainStep([{ ...sample(1), oldLogp }]);
    expect(up.clipFracHigh).toBe(1);
    expect(up.gradNorm).toBe(0);
    const down = await trainer.trainStep([{ ...sample(-1), oldLogp }]);
    expect(down.clipFracLow).toBe(0);
    expect(down.gradNorm).toBeGreaterThan(0);
  });

  it('computes the same step when the logits are taken a few rows at a time', async () => {
    const params = async (chunk?: number) => {
      const adapter = fresh(5);
      const trainer = new LoraTrainer(policy.model, adapter, { ...settings, logitsChunkFloats: chunk });
      const stats = await trainer.trainStep([sample(1), { ...sample(-0.5), completion: completion.slice(0, 5), advantages: [1, -1, 0.5, 2, -2] }]);
      return { stats, values: await Promise.all(adapter.parameters().map((p) => policy.model.backend.read(p.tensor))) };
    };
    const whole = await params();
    const chunked = await params(policy.config.vocabSize * 3);
    expect(chunked.stats.loss).toBeCloseTo(whole.stats.loss, 6);
    expect(chunked.stats.gradNorm).toBeCloseTo(whole.stats.gradNorm, 5);
    chunked.values.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - whole.values[i][j])).toBeLessThan(1e-6)));
  });

  it('frees every tensor a step makes: the live bytes after a step equal those before it', async () => {
    const be = policy.model.backend;
    const trainer = new LoraTrainer(policy.model, fresh(6), settings);
    // The first step allocates the optimizer's moments, which stay.
    await trainer.trainStep([sample(1)]);
    const before = be.memory().allocated;
    await trainer.trainStep([sample(-1), sample(0.5)]);
    expect(be.memory().allocated).toBe(before);
  });

  it('skips a step with a non-finite loss and leaves the adapter untouched, saying why', async () => {
    const adapter = fresh();
    const before = await Promise.all(adapter.parameters().map((p) => policy.model.backend.read(p.tensor)));
    const trainer = new LoraTrainer(policy.model, adapter, settings);
    const bad = sample(1);
    bad.advantages[2] = Number.NaN;
    const stats = await trainer.trainStep([bad]);
    expect(stats.skipped).toMatch(/NaN/);
    expect(trainer.stepsTaken).toBe(0);
    const after = await Promise.all(adapter.parameters().map((p) => policy.model.backend.read(p.tensor)));
    after.forEach((t, i) => expect(Array.from(t)).toEqual(Array.from(before[i])));
    // The next good step goes through.
    expect((await trainer.trainStep([sample(1)])).skipped).toBeNull();
  });

  it('re-bases the OPD term on the old policy it trains, not on the rollout log-probs', async () => {
    const adapter = fresh(4);
    const old = (await score(policy.model, [{ prompt, completion }], { lora: adapter }))[0].logprobs;
    const teacher = Array.from(old, (x, t) => x + 0.1 * (t % 3));
    // The rollout reported log-probs 0.5 below the trainer's (a rollout/train mismatch).
    const rolloutLogp = Array.from(old, (x) => x - 0.5);
    const w = 0.8;
    const judged = teacher.map((x, t) => 1 + w * (x - rolloutLogp[t]));
    const stats = await new LoraTrainer(policy.model, adapter, settings).trainStep(
      [{ prompt, completion, advantages: judged, rolloutLogp, opdWeight: w }, sample(1)],
      { scoreAfter: true },
    );
    stats.perSample![0]!.advantages.forEach((a, t) => expect(a).toBeCloseTo(1 + w * (teacher[t] - old[t]), 5));
    expect(stats.perSample![1]!.advantages).toEqual(sample(1).advantages);
    expect(stats.opdGap).toBeCloseTo(w * 0.5, 5);
    expect(stats.meanAbsAdv).toBeCloseTo(mean([...stats.perSample![0]!.advantages, ...sample(1).advantages].map(Math.abs)), 5);
  });

  it('a clipped OPD term (top-k hint selection) is re-based as clip(teacher - old), not shifted', async () => {
    const adapter = fresh(4);
    const old = (await score(policy.model, [{ prompt, completion }], { lora: adapter }))[0].logprobs;
    // Teacher minus old: 2.5, -0.3, 1.4, -3, ... ; the rollout sits 0.5 below the trainer.
    const diffs = [2.5, -0.3, 1.4, -3];
    const teacher = Array.from(old, (x, t) => x + diffs[t % 4]);
    const rolloutLogp = Array.from(old, (x) => x - 0.5);
    const w = 0.8;
    const clip = 1;
    const c = (x: number) => Math.min(clip, Math.max(-clip, x));
    const judged = teacher.map((x, t) => 1 + w * c(x - rolloutLogp[t]));
    const stats = await new LoraTrainer(policy.model, adapter, settings).trainStep(
      [{ prompt, completion, advantages: judged, rolloutLogp, opdWeight: w, opdClip: { clip, teacherLogp: teacher } }],
      { scoreAfter: true },
    );
    stats.perSample![0]!.advantages.forEach((a, t) => expect(a).toBeCloseTo(1 + w * c(diffs[t % 4]), 5));
    // A shift by w (rollout - old) would have given 1 + w (c(diff + 0.5) - 0.5): e.g. 1 - 0.64 for -0.3, not 1 - 0.24.
    expect(stats.perSample![0]!.advantages[1]).toBeCloseTo(1 - 0.24, 5);
  });

  it('refuses a clipped OPD term without a teacher log-prob per token', async () => {
    const trainer = new LoraTrainer(policy.model, fresh(4), settings);
    const x = { ...sample(1), rolloutLogp: sample(1).advantages.map(() => -1), opdWeight: 1, opdClip: { clip: 1, teacherLogp: [-1] } };
    await expect(trainer.trainStep([x])).rejects.toThrow(/teacher log-probs/);
  });

  it('OPD advantages (teacher - student) shrink the log-ratio to a hint-conditioned teacher', async () => {
    const adapter = fresh(3);
    const [g] = await generate(policy.model, [prompt], { maxNewTokens: 20 });
    const teacherPrompt = policy.promptIds('Max was a big brown dog. Once upon a time');
    // The teacher is the frozen base model seeing the hint-like context.
    const teacher = (await score(policy.model, [{ prompt: teacherPrompt, completion: g.tokens }]))[0].logprobs;
    const gap = async () => {
      const student = (await score(policy.model, [{ prompt, completion: g.tokens }], { lora: adapter }))[0].logprobs;
      return { student, meanAbs: mean(student.map((s, t) => Math.abs(s - teacher[t]))) };
    };
    const trainer = new LoraTrainer(policy.model, adapter, { ...settings, lr: 1e-3 });
    const start = await gap();
    let last = start;
    for (let i = 0; i < 4; i++) {
      const advantages = Array.from(teacher, (t, k) => t - last.student[k]);
      await trainer.trainStep([{ prompt, completion: g.tokens, advantages }]);
      last = await gap();
    }
    expect(last.meanAbs).toBeLessThan(start.meanAbs * 0.9);
  });
});
