/**
 * The reverse-KL OPD term in the engine's step (stories260K, CPU reference backend). Over the
 * whole vocabulary it runs through the backend's reverseKl op on the logits; over top-k sets
 * through the gathered members' log-probs, as the top-k select term does. Both must give the
 * same update where they compute the same KL, and both teach a token the policy did not write.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { reverseKlFull } from '../rl/reverse-kl';
import { CpuBackend } from './cpu/backend';
import { LoraAdapter } from './lora';
import { Policy } from './policy';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { LoraTrainer } from './train';
import { DEFAULT_TRAIN, type TrainSample } from './train-types';

const stories = dataPath('models/stories260K');

describe('reverse-KL OPD term in a training step on stories260K', () => {
  let policy: Policy;
  let prompt: number[];
  let completion: number[];
  let V: number;
  let every: number[];

  beforeAll(async () => {
    policy = await Policy.load(new DirSource(stories), new CpuBackend());
    prompt = policy.promptIds('Once upon a time');
    completion = policy.tokenizer.encode(' there was a dog named Max.', false);
    V = policy.config.vocabSize;
    every = Array.from({ length: V }, (_, i) => i);
  });

  const fresh = () => LoraAdapter.init(policy.model.backend, policy.config, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] }, 5);
  const settings = { ...DEFAULT_TRAIN, lr: 2e-3, weightDecay: 0 };
  const values = (a: LoraAdapter) => Promise.all(a.parameters().map((p) => policy.model.backend.read(p.tensor)));
  /** log p of every vocabulary id at every completion position, in id order. */
  const distributions = async (adapter: LoraAdapter | undefined, c = completion) =>
    (await score(policy.model, [{ prompt, completion: c }], { lora: adapter, gather: [c.map(() => every)] }))[0].gathered!.map((r) => Array.from(r));
  /** A teacher that likes `boost` more than the student does at position `at`, and agrees elsewhere (renormalised). */
  const teacherFrom = (student: number[][], at: number, boost: number, by: number) =>
    student.map((row, t) => {
      if (t !== at) return row;
      const raised = row.map((x, id) => (id === boost ? x + by : x));
      const lse = Math.log(raised.reduce((s, x) => s + Math.exp(x), 0));
      return raised.map((x) => x - lse);
    });

  it('the whole-vocabulary op gives the update, loss and gradient norm of the same KL taken over gathered sets', async () => {
    const student = await distributions(undefined);
    // A flatter teacher (the student's at temperature 2) with ' cat' raised at one position: KL everywhere.
    const flat = student.map((row) => {
      const lse = Math.log(row.reduce((s, x) => s + Math.exp(x / 2), 0));
      return row.map((x) => x / 2 - lse);
    });
    const teacher = teacherFrom(flat, 3, policy.tokenizer.encode(' cat', false)[0], 3);
    // Sets listed most-likely-first, as the judge scores them: the op reorders them by id.
    const order = teacher.map((row) => [...every].sort((a, b) => row[b] - row[a]));
    const w = 0.7;
    const n = completion.length;
    const viaOp = fresh();
    const a = await new LoraTrainer(policy.model, viaOp, settings).trainStep([
      {
        prompt,
        completion,
        advantages: completion.map(() => 0),
        opdTopK: { weight: w, clip: 0, term: 'reverse-kl', ids: order, teacherLogp: order.map((ids, t) => ids.map((id) => teacher[t][id])) },
      },
    ]);
    // The same sample with one more token whose set is a single id (KL 0, no gradient): not every
    // set is the whole vocabulary, so the sample takes the gathered-columns path. The extra token
    // would dilute the sample mean by n / (n + 1); the weight makes up for it.
    const longer = [...completion, completion[0]];
    const viaColumns = fresh();
    const b = await new LoraTrainer(policy.model, viaColumns, settings).trainStep([
      {
        prompt,
        completion: longer,
        advantages: longer.map(() => 0),
        opdTopK: {
          weight: (w * (n + 1)) / n,
          clip: 0,
          term: 'reverse-kl',
          ids: [...order, [completion[1]]],
          teacherLogp: [...order.map((ids, t) => ids.map((id) => teacher[t][id])), [-1]],
        },
      },
    ]);
    // The loss is w times the mean KL of the positions.
    const wantKl = student.reduce((s, row, t) => s + reverseKlFull(row, teacher[t]).kl, 0) / n;
    expect(a.loss).toBeCloseTo(w * wantKl, 5);
    expect(a.loss).toBeGreaterThan(0.01);
    expect(b.loss).toBeCloseTo(a.loss, 5);
    expect(a.gradNorm).toBeGreaterThan(0);
    expect(Math.abs(a.gradNorm - b.gradNorm) / a.gradNorm).toBeLessThan(1e-4);
    const [x, y] = [await values(viaOp), await values(viaColumns)];
    x.forEach((t, i) => t.forEach((v, j) => expect(v).toBeCloseTo(y[i][j], 6)));
  });

  it('teaches a token the policy did not write, over the whole vocabulary and over the teacher top-k (renormalised and with a tail; reverse and forward)', async () => {
    const at = 4;
    const unsampled = policy.tokenizer.encode(' cat', false)[0];
    expect(unsampled).not.toBe(completion[at]);
    const before = (await distributions(undefined))[at][unsampled];
    const forms = ['whole', 'top-8', 'top-8 with a tail', 'forward top-8', 'forward top-8 with a tail'] as const;
    const terms = {
      whole: 'reverse-kl',
      'top-8': 'reverse-kl',
      'top-8 with a tail': 'reverse-kl-tail',
      'forward top-8': 'forward-kl',
      'forward top-8 with a tail': 'forward-kl-tail',
    } as const;
    for (const form of forms) {
      const adapter = fresh();
      const trainer = new LoraTrainer(policy.model, adapter, settings);
      const losses: number[] = [];
      for (let step = 0; step < 3; step++) {
        // The teacher is the start policy with the unsampled token raised by 2 nats at `at`.
        const teacher = teacherFrom(await distributions(undefined), at, unsampled, 2);
        const ids = teacher.map((row) => (form === 'whole' ? every : [...every].sort((a, b) => row[b] - row[a]).slice(0, 8)));
        const stats = await trainer.trainStep([
          {
            prompt,
            completion,
            advantages: completion.map(() => 0),
            opdTopK: {
              weight: 1,
              clip: 0,
              term: terms[form],
              ids,
              teacherLogp: ids.map((set, t) => set.map((id) => teacher[t][id])),
            },
          },
        ]);
        expect(stats.skipped).toBeNull();
        losses.push(stats.loss);
      }
      expect(losses[2], form).toBeLessThan(losses[0]);
      expect((await distributions(adapter))[at][unsampled], form).toBeGreaterThan(before + 0.05);
    }
  });

  it('takes fixed old log-probs (a KL has no ratio), and refuses a whole-vocabulary set that repeats an id', async () => {
    const trainer = new LoraTrainer(policy.model, fresh(), settings);
    const teacher = await distributions(undefined);
    const opdTopK = { weight: 1, clip: 0, term: 'reverse-kl' as const, ids: completion.map(() => every), teacherLogp: teacher };
    const x: TrainSample = { prompt, completion, advantages: completion.map(() => 0), opdTopK };
    const stats = await trainer.trainStep([{ ...x, oldLogp: completion.map(() => -1) }]);
    // The teacher is the policy itself: KL 0.
    expect(stats.loss).toBeCloseTo(0, 5);
    const repeated = every.map((id) => (id === 7 ? 8 : id));
    await expect(trainer.trainStep([{ ...x, opdTopK: { ...opdTopK, ids: [repeated, ...opdTopK.ids.slice(1)] } }])).rejects.toThrow(
      /not every vocabulary id once/,
    );
  });
});
