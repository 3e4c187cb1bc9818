/**
 * The tool-call run loop with a scripted policy service: every rollout of a group plays a fixed
 * script, so the rules PRM's votes, the step rewards of both reward modes, the advantages
 * standardized per step index, the samples (by default one per trajectory, each step's advantage
 * on its own tokens and the tool outputs loss-masked; or one per step, the step's advantage on
 * each of its tokens) and what reaches PolicyService.train can be checked against hand-computed
 * numbers.
 */
import { describe, expect, it } from 'vitest';
import type { StepStats } from '../../gpu/train-types';
import type { ChatMessage } from '../../rl/messages';
import type { ToolCallSamples } from '../../rl/presets';
import type { EvaluationRecord, InteractionRecord, RunRecord, SampleRecord, ToolStepRecord, TrainStepRecord } from '../../rl/records';
import { validatingSink } from '../../../test/support/runtime/headless';
import { BUILT_IN_PROBLEMS } from '../../sims/problems/index';
import { CALCULATOR_TOOL, RulesStepJudge, type RewardMode } from '../../sims/toolcall/index';
import { calculatorCall } from '../../../test/support/toolcall/testing';
import type { PolicyReply, PolicyRequest, PolicyService, TrainItem, TrainResult } from '../policy-service';
import {
  exampleConfig,
  parseAnyRunConfig,
  parseRunConfig,
  parseToolCallRunConfig,
  promptTools,
  RunConfigError,
  TOOL_TRACK_TOOLS,
  type ToolCallRunConfig,
} from '../run-config';
import { trainingSamples } from '../../storage/exports';
import { Summarizer } from '../../storage/summary';
import { resumePlan } from '../resume-plan';
import { rolloutId, rolloutSeed, ToolCallRunLoop } from './loop';
import { splitHeldOut } from './problems';

/** builtin#0: 4 trays of 18 cookies, 24 given away, bags of 6: #### 8. */
const PROBLEM = BUILT_IN_PROBLEMS[0];
/** builtin#1 (#### 17) and builtin#2 (#### 10). */
const HELD_OUT = [BUILT_IN_PROBLEMS[1], BUILT_IN_PROBLEMS[2]];

/** One script per rollout, one output per step. */
const SCRIPTS: string[][] = [
  // o = +1; every call runs, the final answer states a number: votes +1 everywhere.
  [calculatorCall('4 * 18'), calculatorCall('72 - 24'), calculatorCall('48 / 6'), 'She fills 8 bags. The answer is 8.'],
  // o = -1; a good call, then a wrong answer that still states a number.
  [calculatorCall('4 * 18'), 'The answer is 72.'],
  // o = +1; a malformed call (vote -1), then the right answer.
  ['<tool_call>\n{"name": "calc", "arguments": {}}\n</tool_call>', 'The answer is 8.'],
  // o = -1; a final answer without a number (vote -1).
  ['I am not sure.'],
];
const SAMPLES_PER_GROUP = SCRIPTS.reduce((n, s) => n + s.length, 0);
/** Greedy evaluation always answers 17: right on builtin#1, wrong on builtin#2. */
const EVAL_ANSWER = 'The answer is 17.';
const RUN_SEED = 5;

const STATS: StepStats = {
  step: 0,
  loss: 0.1,
  policyLoss: 0.1,
  kl: 0,
  clipFracLow: 0,
  clipFracHigh: 0,
  entropy: 1,
  meanAbsAdv: 1,
  gradNorm: 0.5,
  tokens: 10,
  stepMs: 1,
  rolloutGap: 0,
  opdGap: null,
  microBatches: 1,
  skipped: null,
};

/**
 * The prompt a chat template would render, one token per character: every message after a role
 * marker, then the assistant's marker. Step t's prompt and its reply are a prefix of step t+1's.
 */
const renderPrompt = (messages: readonly ChatMessage[]) => messages.map((m) => `<${m.role}>${m.content}`).join('') + '<assistant>';
const ids = (text: string) => [...text].map((c) => c.codePointAt(0)!);

/** Plays SCRIPTS by the request's seed (group, rollout, step); one token per character. */
class ScriptedPolicyService implements PolicyService {
  readonly label = 'scripted';
  readonly requests: PolicyRequest[] = [];
  readonly trained: TrainItem[][] = [];
  private version = 0;
  private readonly bySeed = new Map<number, string>();

  /**
   * `promptIds`: whether replies report the ids they read (the engine's do; a server's may not).
   * `render`: how it renders each request's conversation, whole (it continues no ids, as a server).
   */
  constructor(private readonly opts: { promptIds?: boolean; render?: (messages: readonly ChatMessage[]) => string } = {}) {
    for (let g = 0; g < 50; g++) {
      SCRIPTS.forEach((script, r) => script.forEach((text, t) => this.bySeed.set(rolloutSeed(RUN_SEED, g, r, t), text)));
    }
  }

  servingVersion(): number {
    return this.version;
  }

  async generate(requests: PolicyRequest[]): Promise<PolicyReply[]> {
    this.requests.push(...requests);
    return requests.map((r) => {
      const text = r.sampling.temperature === 0 ? EVAL_ANSWER : this.bySeed.get(r.seed);
      if (text === undefined) throw new Error(`no script for seed ${r.seed}`);
      const tokenIds = ids(text);
      const prompt = this.opts.promptIds === false ? {} : { promptIds: ids((this.opts.render ?? renderPrompt)(r.messages)) };
      return { text, tokenIds, logprobs: tokenIds.map(() => -0.5), tokenTexts: [...text], ...prompt, version: this.version, startedAt: 1, finishedAt: 2 };
    });
  }

  async score(): Promise<number[][]> {
    throw new Error('the tool-call track scores no teacher');
  }

  async train(items: TrainItem[]): Promise<TrainResult> {
    this.trained.push(items);
    this.version++;
    return { version: this.version, stats: STATS, startedAt: 3, finishedAt: 4 };
  }

  async exportAdapter(): Promise<never> {
    throw new Error('not in this test');
  }

  async restore(): Promise<void> {}
}

/** The example's config on the scripted problem; `samples` absent keeps the example's (the preset's default). */
function config(mode: RewardMode, samples?: ToolCallSamples): ToolCallRunConfig {
  const c = exampleConfig('toolcall', 'scripted');
  c.seed = RUN_SEED;
  c.toolcall = { rewardMode: mode, groupSize: SCRIPTS.length, maxSteps: 8, evalHeldOut: HELD_OUT.length };
  c.schedule = { concurrentGroups: 1, steps: 2, evalEvery: 2 };
  if (samples) c.preset.batch.toolCallSamples = samples;
  // A group per step: one sample per rollout, or one per step of every rollout.
  c.preset.batch.size = (samples ?? c.preset.batch.toolCallSamples) === 'step' ? SAMPLES_PER_GROUP : SCRIPTS.length;
  c.preset.judge.binaryVotes = 2;
  return parseToolCallRunConfig(JSON.parse(JSON.stringify(c)));
}

async function runScripted(mode: RewardMode, samples?: ToolCallSamples, policy = new ScriptedPolicyService()) {
  const records: RunRecord[] = [];
  const loop = new ToolCallRunLoop(
    config(mode, samples),
    { policy, judge: new RulesStepJudge() },
    { train: [PROBLEM], heldOut: HELD_OUT },
    validatingSink(records),
  );
  const result = await loop.run();
  const of = <K extends RunRecord['kind']>(kind: K) => records.filter((r) => r.kind === kind) as Extract<RunRecord, { kind: K }>[];
  return { result, records, policy, of };
}

/** The resume plan of a stop right after the log's last record, every logged sample still buffered. */
function planAllBuffered(records: RunRecord[]) {
  const seq = (r: RunRecord) => records.indexOf(r) + 1;
  const interactions = records.filter((r): r is InteractionRecord => r.kind === 'interaction');
  const buffered = records
    .filter((r): r is SampleRecord => r.kind === 'sample')
    .map((s) => {
      const i = interactions.find((x) => x.session === s.session && x.turn === s.turn)!;
      return { sample: { seq: seq(s), record: s }, interaction: { seq: seq(i), record: i } };
    });
  return resumePlan({ lastStep: null, nextStep: 0, version: 0, adapter: null, throughSeq: records.length, buffered }, records);
}

const SQRT2 = Math.SQRT2;
/** Hand-computed: rewards per rollout and step, and advantages standardized per step index. */
const EXPECTED: Record<RewardMode, { rewards: number[][]; advantages: number[][] }> = {
  // r = o + mean(votes): [+1: 2 2 2 2] [-1: 0 0] [+1: 0 2] [-1: -2]
  // step 0: 2 0 0 -2 (mean 0, std sqrt 2); step 1: 2 0 2 (mean 4/3, std sqrt(8)/3); steps 2, 3: one rollout, raw reward.
  integrated: {
    rewards: [[2, 2, 2, 2], [0, 0], [0, 2], [-2]],
    advantages: [[SQRT2, 1 / SQRT2, 2, 2], [0, -SQRT2], [0, 1 / SQRT2], [-SQRT2]],
  },
  // r = o: step 0: 1 -1 1 -1 (mean 0, std 1); step 1: 1 -1 1.
  outcome: {
    rewards: [[1, 1, 1, 1], [-1, -1], [1, 1], [-1]],
    advantages: [[1, 1 / SQRT2, 1, 1], [-1, -SQRT2], [1, 1 / SQRT2], [-1]],
  },
};

describe('ToolCallRunLoop with a scripted policy and the rules PRM', () => {
  it.each(['integrated', 'outcome'] as const)('%s mode: rewards, advantages, samples and training items per step', async (mode) => {
    const { result, policy, of } = await runScripted(mode, 'step');
    expect(result).toEqual({ status: 'finished', step: 2, version: 2 });

    const steps = of('tool_step') as ToolStepRecord[];
    const interactions = of('interaction') as InteractionRecord[];
    const samples = of('sample') as SampleRecord[];
    const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;
    const interactionOf = new Map(interactions.map((i) => [key(i), i]));
    const sampleOf = new Map(samples.map((s) => [key(s), s]));

    // The first two groups were trained on; each has every rollout and step of the script.
    for (const g of [0, 1]) {
      SCRIPTS.forEach((script, r) => {
        const mine = steps.filter((s) => s.session === rolloutId(g, r));
        expect(mine.map((s) => s.stepIndex)).toEqual(script.map((_, t) => t));
        mine.forEach((s, t) => {
          expect(s).toMatchObject({ group: `g${g}`, problem: PROBLEM.id, turn: t + 1, mode, final: t === script.length - 1, outcome: r % 2 === 0 ? 1 : -1 });
          // The documented formulas, then the hand-computed numbers.
          const valid = s.votes.filter((v): v is 1 | -1 => v !== null);
          const meanVotes = valid.length ? valid.reduce((a, b) => a + b, 0) / valid.length : 0;
          expect(s.reward).toBeCloseTo(mode === 'integrated' ? s.outcome + meanVotes : s.outcome, 12);
          expect(s.votes).toHaveLength(mode === 'integrated' ? 2 : 0);
          expect(s.raw).toHaveLength(s.votes.length);
          expect(s.reward).toBeCloseTo(EXPECTED[mode].rewards[r][t], 12);
          expect(s.advantage).toBeCloseTo(EXPECTED[mode].advantages[r][t], 5);
          // The step's interaction: what the policy saw and wrote at that step.
          const interaction = interactionOf.get(key(s))!;
          expect(interaction.response).toBe(script[t]);
          expect(interaction.version).toBe(s.version);
          // One sample per step: the step's advantage on each of its tokens.
          const sample = sampleOf.get(key(s))!;
          expect(sample.perToken).toHaveLength(interaction.tokenIds.length);
          expect(sample.perToken.every((a) => a === s.advantage)).toBe(true);
          expect(sample.reward).toBe(s.reward);
          expect(sample.version).toBe(s.version);
        });
      });
    }
    // Tool results go back as tool messages: rollout 0's second step saw its first call answered.
    const second = interactionOf.get(`${rolloutId(0, 0)}#2`)!;
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: SCRIPTS[0][0] },
      { role: 'tool', content: '72' },
    ]);
    expect(steps.find((s) => s.session === rolloutId(0, 0) && s.stepIndex === 2)!.toolResults).toEqual(['8']);
    expect(steps.find((s) => s.session === rolloutId(0, 2) && s.stepIndex === 0)!.toolResults[0]).toMatch(/^Error: /);

    // Every policy request lists the calculator in the chat template's tools; rollouts sample, evaluation is greedy.
    expect(policy.requests.every((r) => r.tools === TOOL_TRACK_TOOLS && r.tools[0] === CALCULATOR_TOOL)).toBe(true);

    // Two train steps, each on one group's 9 step samples (S steps -> S samples), with the prompts they were sampled from.
    const trainSteps = of('train_step') as TrainStepRecord[];
    expect(trainSteps.map((s) => [s.step, s.samples, s.version])).toEqual([
      [1, SAMPLES_PER_GROUP, 0],
      [2, SAMPLES_PER_GROUP, 1],
    ]);
    expect(of('version_boundary').map((b) => [b.from, b.to])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(policy.trained).toHaveLength(2);
    policy.trained.forEach((batch, b) => {
      // Samples are logged in buffer order, so batch b is sample records 9b .. 9b + 8: one whole group.
      const logged = samples.slice(b * SAMPLES_PER_GROUP, (b + 1) * SAMPLES_PER_GROUP);
      expect(new Set(logged.map((x) => x.session.split('.')[0])).size).toBe(1);
      expect(batch).toHaveLength(SAMPLES_PER_GROUP);
      batch.forEach((item, i) => {
        const interaction = interactionOf.get(key(logged[i]))!;
        expect(item.tools).toBe(TOOL_TRACK_TOOLS);
        expect(item.messages).toEqual(interaction.messages);
        expect(item.tokenIds).toEqual(interaction.tokenIds);
        expect(item.rolloutLogp).toEqual(interaction.logprobs);
        expect(item.advantages).toEqual(logged[i].perToken);
        expect(item.trainable).toBe(logged[i].trainable);
      });
      // The prompt of step t is the conversation before it: system, question, then 2 messages per earlier tool step.
      expect(batch.map((it) => it.messages.length).sort()).toEqual([2, 2, 2, 2, 4, 4, 4, 6, 8].sort());
    });
    // Zero advantages (rollouts 1 and 2 at step 0) follow the buffer's rule; the rest train.
    for (const s of samples) expect(s.trainable).toBe(s.perToken.some((a) => a !== 0) || s.promoted);

    // Accuracy on the held-out problems, greedy, before training and after the last step.
    const evals = of('evaluation') as EvaluationRecord[];
    expect(evals.map((e) => [e.name, e.step, e.version])).toEqual([
      ['accuracy', 0, 0],
      ['accuracy', 2, 2],
    ]);
    for (const e of evals) {
      expect(e.scores).toMatchObject({ accuracy: 0.5, answered: 1, meanSteps: 1, meanToolCalls: 0 });
      expect(e.perProblem.map((p) => [p.id, p.score])).toEqual([
        [HELD_OUT[0].id, 1],
        [HELD_OUT[1].id, 0],
      ]);
      expect(e.perProblem[1].detail).toMatch(/^answer 17 \(expected 10\); 1 step\(s\), 0 tool call\(s\)/);
    }
    const greedy = policy.requests.filter((r) => r.sampling.temperature === 0);
    expect(greedy).toHaveLength(2 * HELD_OUT.length);
  });
});

describe('ToolCallRunLoop: one sample per trajectory, tool outputs masked (the default)', () => {
  it.each(['integrated', 'outcome'] as const)('%s mode: each rollout is one sample, its steps joined as the policy read them', async (mode) => {
    expect(exampleConfig('toolcall').preset.batch.toolCallSamples).toBe('trajectory');
    const { result, policy, of } = await runScripted(mode);
    expect(result).toEqual({ status: 'finished', step: 2, version: 2 });
    const samples = of('sample') as SampleRecord[];
    const interactions = of('interaction') as InteractionRecord[];
    const steps = of('tool_step') as ToolStepRecord[];

    // Two train steps, each on one group's 4 rollouts: 4 samples, not the 9 of per-step samples.
    expect((of('train_step') as TrainStepRecord[]).map((s) => [s.step, s.samples])).toEqual([
      [1, SCRIPTS.length],
      [2, SCRIPTS.length],
    ]);
    expect(samples).toHaveLength(2 * SCRIPTS.length);
    policy.trained.forEach((batch, b) => {
      expect(batch).toHaveLength(SCRIPTS.length);
      batch.forEach((item, r) => {
        const sample = samples[b * SCRIPTS.length + r];
        const session = rolloutId(b, r);
        expect(sample).toMatchObject({ session, turn: 1 });
        const turns = interactions.filter((i) => i.session === session).sort((x, y) => x.turn - y.turn);
        const last = turns.at(-1)!;
        // The prompt is the first step's; the completion is everything the last step read after
        // it, then the last step's own tokens: each policy token after exactly what it was sampled after.
        expect(item.messages).toEqual(turns[0].messages);
        expect(item.messages).toHaveLength(2);
        expect(item.tokenIds).toEqual([...last.promptIds!.slice(turns[0].promptIds!.length), ...last.tokenIds]);
        // Mask, advantages and rollout log-probs, token by token: step t's span, then the tool output it got.
        const mask: number[] = [];
        const advantages: number[] = [];
        const logp: number[] = [];
        turns.forEach((turn, t) => {
          const step = steps.find((s) => s.session === session && s.stepIndex === t)!;
          if (t > 0) {
            const read = turn.promptIds!.length - turns[t - 1].promptIds!.length - turns[t - 1].tokenIds.length;
            // What the policy read between two steps: the tool's answer and the turn markers.
            const before = steps.find((s) => s.session === session && s.stepIndex === t - 1)!;
            expect(String.fromCodePoint(...turn.promptIds!.slice(-read))).toBe(`<tool>${before.toolResults.join('<tool>')}<assistant>`);
            mask.push(...new Array<number>(read).fill(0));
            advantages.push(...new Array<number>(read).fill(0));
            logp.push(...new Array<number>(read).fill(0));
          }
          mask.push(...turn.tokenIds.map(() => 1));
          advantages.push(...turn.tokenIds.map(() => step.advantage ?? 0));
          logp.push(...turn.logprobs);
          expect(step.advantage ?? 0).toBeCloseTo(EXPECTED[mode].advantages[r][t], 5);
        });
        expect(item.lossMask).toEqual(mask);
        expect(sample.lossMask).toEqual(mask);
        expect(item.advantages).toEqual(advantages);
        expect(sample.perToken).toEqual(advantages);
        expect(item.rolloutLogp).toEqual(logp);
        // Its reward is the reference's sample score, o + mean PRM score: the mean of the step rewards.
        const rewards = EXPECTED[mode].rewards[r];
        expect(sample.reward).toBeCloseTo(rewards.reduce((a, x) => a + x, 0) / rewards.length, 12);
      });
    });
    // Rollout 0 took 4 steps, rollout 3 one: the long one is still one sample of the batch.
    expect(policy.trained[0][0].lossMask!.filter((m) => m === 0).length).toBeGreaterThan(0);
    expect(policy.trained[0][3].lossMask).toEqual(policy.trained[0][3].tokenIds.map(() => 1));
  });

  it('the log gives the trajectory samples back: a resume rebuilds them, and the sample export writes them with their mask', async () => {
    const { records, policy, of } = await runScripted('integrated');
    const samples = of('sample') as SampleRecord[];
    const interactions = of('interaction') as InteractionRecord[];
    const plan = planAllBuffered(records);
    expect(plan.dropped).toBe(0);
    const trained = policy.trained.flat();
    plan.samples.forEach((s, k) => {
      expect(s.response.tokenIds).toEqual(trained[k].tokenIds);
      expect(s.response.logprobs).toEqual(trained[k].rolloutLogp);
      expect(s.lossMask).toEqual(trained[k].lossMask);
      expect(s.advantages).toEqual(trained[k].advantages);
      expect(s.messages).toEqual(trained[k].messages);
    });
    const { rows, unmatched } = trainingSamples(records);
    expect(unmatched).toEqual([]);
    expect(rows).toHaveLength(samples.length);
    rows.forEach((row, k) => {
      expect(row.completion_ids).toEqual(trained[k].tokenIds);
      expect(row.loss_mask).toEqual(samples[k].trainable ? trained[k].lossMask : trained[k].lossMask!.map(() => 0));
      expect(row.prompt_ids).toEqual(interactions.find((i) => i.session === row.session && i.turn === 1)!.promptIds);
    });
    // The completion in messages: the steps, with the tool outputs between them (rollout 0: 4 steps).
    expect(rows[0].completion.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(rows[0].completion.map((m) => m.content)).toEqual([SCRIPTS[0][0], '72', SCRIPTS[0][1], '48', SCRIPTS[0][2], '8', SCRIPTS[0][3]]);
  });

  it.each([
    ['no-prompt-ids', 'reports no prompt ids', { promptIds: false }],
    // Like Qwen3 with thinking off: the generation prompt ends in a block that earlier turns leave out.
    [
      'prompt-mismatch',
      'renders each prompt whole with a template that rewrites earlier turns',
      { render: (m: readonly ChatMessage[]) => `${renderPrompt(m)}<think/>` },
    ],
  ] as const)('falls back to one sample per step, logging %s, for a policy that %s; the run summary counts the trajectories', async (why, _policy, opts) => {
    const { of, policy, records } = await runScripted('integrated', undefined, new ScriptedPolicyService(opts));
    const samples = of('sample') as SampleRecord[];
    expect(samples.slice(0, SAMPLES_PER_GROUP).map((s) => s.session)).toEqual(SCRIPTS.flatMap((script, r) => script.map(() => rolloutId(0, r))));
    // Every step of a trajectory of several steps says why; a one-step trajectory's one sample is what it would be anyway.
    for (const s of samples) {
      const steps = SCRIPTS[Number(s.session.split('.r')[1])].length;
      expect(s.trajectoryFallback).toBe(steps > 1 ? why : undefined);
      if (steps > 1) expect(s.lossMask).toBeUndefined();
    }
    // Nothing trained holds a tool output: no steps were joined.
    expect(policy.trained.flat().every((item) => (item.lossMask ?? []).every((m) => m === 1))).toBe(true);
    // A resume rebuilds them with the reason.
    const plan = planAllBuffered(records);
    expect(plan.samples.map((x) => x.trajectoryFallback)).toEqual(samples.map((x) => x.trajectoryFallback));
    const summarizer = new Summarizer();
    for (const r of records) summarizer.add(r);
    const fellBack = new Set(samples.filter((s) => s.trajectoryFallback).map((s) => s.session)).size;
    expect(fellBack).toBeGreaterThanOrEqual(SCRIPTS.length - 1);
    expect(summarizer.result().trajectoryFallbacks).toEqual({ 'no-prompt-ids': 0, 'prompt-mismatch': 0, [why]: fellBack });
  });

  it('logs no fallback where the steps join, nor where the preset asks for one sample per step', async () => {
    for (const samples of [undefined, 'step'] as const) {
      const { of, records } = await runScripted('integrated', samples);
      expect((of('sample') as SampleRecord[]).some((s) => s.trajectoryFallback !== undefined)).toBe(false);
      const summarizer = new Summarizer();
      for (const r of records) summarizer.add(r);
      expect(summarizer.result().trajectoryFallbacks).toEqual({ 'no-prompt-ids': 0, 'prompt-mismatch': 0 });
    }
  });
});

describe('tool-call run configs', () => {
  it('name the tools their prompts list (for sample exports); personal-track configs name none', () => {
    expect(promptTools(exampleConfig('toolcall'))).toBe(TOOL_TRACK_TOOLS);
    expect(promptTools(exampleConfig('student'))).toBeUndefined();
  });

  it('the example is complete, parses, and keeps personal configs readable as before', () => {
    const example = exampleConfig('toolcall');
    expect(parseAnyRunConfig(JSON.parse(JSON.stringify(example)))).toEqual(example);
    expect(example).toMatchObject({
      track: 'toolcall',
      method: 'binary',
      models: { policy: { model: 'Qwen/Qwen3-0.6B' }, judge: { kind: 'rules' } },
      toolcall: { rewardMode: 'integrated', groupSize: 8, maxSteps: 8, evalHeldOut: 50 },
    });
    const student = exampleConfig('student');
    expect(parseAnyRunConfig(JSON.parse(JSON.stringify(student)))).toEqual(student);
    expect(parseRunConfig({ ...student, track: 'personal' })).toMatchObject({ track: 'personal' });
    expect(() => parseRunConfig(example)).toThrow(/parseAnyRunConfig/);
  });

  it.each([
    ['rewardMode', (c: any) => (c.toolcall.rewardMode = 'both'), /toolcall.rewardMode/],
    ['groupSize', (c: any) => (c.toolcall.groupSize = 0), /toolcall.groupSize/],
    ['maxSteps', (c: any) => (c.toolcall.maxSteps = 1.5), /toolcall.maxSteps/],
    ['evalHeldOut', (c: any) => (c.toolcall.evalHeldOut = -1), /toolcall.evalHeldOut/],
    ['no held-out with evaluations', (c: any) => (c.toolcall.evalHeldOut = 0), /toolcall.evalHeldOut is 0/],
    ['method', (c: any) => ((c.method = 'combined'), (c.preset.method = 'combined')), /method/],
    ['judge', (c: any) => (c.models.judge = { kind: 'oracle' }), /models.judge.kind/],
    ['concurrentGroups', (c: any) => (c.schedule.concurrentGroups = 0), /schedule.concurrentGroups/],
    ['missing toolcall', (c: any) => delete c.toolcall, /toolcall/],
  ])('refuses a bad %s, naming the field', (_name, mutate, message) => {
    const c = JSON.parse(JSON.stringify(exampleConfig('toolcall')));
    mutate(c);
    expect(() => parseAnyRunConfig(c)).toThrow(RunConfigError);
    expect(() => parseAnyRunConfig(c)).toThrow(message);
  });

  it('holds out the problems after the training ones', () => {
    const problems = BUILT_IN_PROBLEMS.slice(0, 6);
    const split = splitHeldOut(problems, 4, 3);
    expect(split.train.map((p) => p.id)).toEqual(problems.slice(0, 4).map((p) => p.id));
    expect(split.heldOut.map((p) => p.id)).toEqual(problems.slice(4, 6).map((p) => p.id));
  });
});
