/**
 * A multi-step tool-call trajectory on Qwen3's real chat template (the tiny Qwen3 fixture), through
 * the run loop, the batcher and the engine's policy service. Qwen3 with thinking off writes an
 * empty <think> block in each generation prompt and leaves it out of the same reply once a tool
 * result follows, so a prompt rendered whole from the conversation does not continue the ids the
 * step before it read and wrote. Continuing those ids instead (as the reference samples) lets the
 * trajectory train as one sample, the tool outputs masked.
 *
 * A random model never writes a tool call, so the engine's replies are replaced by a script: the
 * engine still renders every prompt and generates after it (its prompt ids are the ones logged),
 * and the scripted reply's ids are what the next step continues.
 */
import { describe, expect, it } from 'vitest';
import { IM_END_ID, tinyModel } from '../../../test/fixtures/tiny-model';
import { validatingSink } from '../../../test/support/runtime/headless';
import { calculatorCall } from '../../../test/support/toolcall/testing';
import { CpuBackend } from '../../gpu/cpu/backend';
import type { PeftFiles } from '../../gpu/peft';
import { Policy } from '../../gpu/policy';
import { DirSource } from '../../models/source-node';
import type { TeacherSource, ToolCallSamples } from '../../rl/presets';
import type { InteractionRecord, RunRecord, SampleRecord, ToolStepRecord } from '../../rl/records';
import { BUILT_IN_PROBLEMS } from '../../sims/problems/index';
import { RulesStepJudge } from '../../sims/toolcall/index';
import {
  EnginePolicyService,
  type GenerationHooks,
  type PolicyReply,
  type PolicyRequest,
  type PolicyService,
  type ScoreItem,
  type TrainItem,
} from '../policy-service';
import { exampleConfig, parseAnyRunConfig, TOOL_TRACK_TOOLS, type ToolCallRunConfig } from '../run-config';
import { rolloutSeed, ToolCallRunLoop } from './loop';

/** builtin#0: #### 8; builtin#1 is held out. */
const PROBLEM = BUILT_IN_PROBLEMS[0];
const HELD_OUT = BUILT_IN_PROBLEMS[1];
const RUN_SEED = 3;
/** Rollout 0 takes four steps, rollout 1 two. */
const SCRIPTS = [
  [calculatorCall('4 * 18'), calculatorCall('72 - 24'), calculatorCall('48 / 6'), 'The answer is 8.'],
  [calculatorCall('4 * 18'), 'The answer is 72.'],
];
/** The greedy evaluation calls the calculator once, then answers. */
const EVAL_SCRIPT = [calculatorCall('1 + 1'), 'The answer is 2.'];

/** What the policy reads after a reply of its own that ended on <|im_end|>: Qwen3's tool turn and the next generation prompt. */
const readAfter = (result: string) =>
  `\n<|im_start|>user\n<tool_response>\n${result}\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`;

/** The engine renders and generates; its reply's text and ids are the script's (each closed by <|im_end|>, as the model stops). */
class ScriptedOnEngine implements PolicyService {
  readonly label = 'scripted on the engine';
  readonly requests: PolicyRequest[] = [];
  readonly trained: TrainItem[][] = [];
  private readonly bySeed = new Map<number, string[]>();

  constructor(
    private readonly engine: EnginePolicyService,
    private readonly policy: Policy,
  ) {
    for (let g = 0; g < 10; g++) SCRIPTS.forEach((script, r) => script.forEach((_, t) => this.bySeed.set(rolloutSeed(RUN_SEED, g, r, t), script)));
  }

  servingVersion(): number {
    return this.engine.servingVersion();
  }

  async generate(requests: PolicyRequest[], signal?: AbortSignal, hooks?: GenerationHooks): Promise<PolicyReply[]> {
    this.requests.push(...requests);
    const replies = await this.engine.generate(requests, signal, hooks);
    return replies.map((reply, i) => {
      const r = requests[i];
      const script = r.sampling.temperature === 0 ? EVAL_SCRIPT : this.bySeed.get(r.seed);
      if (!script) throw new Error(`no script for seed ${r.seed}`);
      const text = script[r.messages.filter((m) => m.role === 'assistant').length];
      const tokenIds = [...this.policy.tokenizer.encode(text, false), IM_END_ID];
      return { ...reply, text, tokenIds, logprobs: tokenIds.map(() => -0.5), tokenTexts: this.policy.tokenizer.tokenTexts(tokenIds) };
    });
  }

  score(items: ScoreItem[], teacher: TeacherSource): Promise<number[][]> {
    return this.engine.score(items, teacher);
  }

  train(items: TrainItem[]) {
    this.trained.push(items);
    return this.engine.train(items);
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.engine.exportAdapter();
  }

  restore(files: PeftFiles, version: number): Promise<void> {
    return this.engine.restore(files, version);
  }
}

async function run(samples: ToolCallSamples) {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const example = exampleConfig('toolcall', dir);
  example.seed = RUN_SEED;
  example.toolcall = { rewardMode: 'integrated', groupSize: SCRIPTS.length, maxSteps: 4, evalHeldOut: 1 };
  example.schedule = { concurrentGroups: 1, steps: 1, evalEvery: 1 };
  example.preset.batch.toolCallSamples = samples;
  example.preset.batch.size = samples === 'trajectory' ? SCRIPTS.length : SCRIPTS.flat().length;
  example.preset.judge.binaryVotes = 1;
  example.sampling.policy.maxNewTokens = 1;
  const config = parseAnyRunConfig(JSON.parse(JSON.stringify(example))) as ToolCallRunConfig;
  const policy = await Policy.load(new DirSource(dir), new CpuBackend());
  const service = new ScriptedOnEngine(new EnginePolicyService(policy, config.preset, config.seed, config.sampling.policy.temperature), policy);
  const records: RunRecord[] = [];
  const loop = new ToolCallRunLoop(
    config,
    { policy: service, judge: new RulesStepJudge() },
    { train: [PROBLEM], heldOut: [HELD_OUT] },
    validatingSink(records),
  );
  expect(await loop.run()).toEqual({ status: 'finished', step: 1, version: 1 });
  const of = <K extends RunRecord['kind']>(kind: K) => records.filter((r) => r.kind === kind) as Extract<RunRecord, { kind: K }>[];
  const turnsOf = (r: number) => (of('interaction') as InteractionRecord[]).filter((i) => i.session === `g0.r${r}`).sort((a, b) => a.turn - b.turn);
  const resultsOf = (r: number, step: number) =>
    (of('tool_step') as ToolStepRecord[]).find((s) => s.session === `g0.r${r}` && s.stepIndex === step)!.toolResults;
  return { policy, service, of, turnsOf, resultsOf };
}

describe("a tool-call trajectory on Qwen3's chat template", () => {
  it('continues each step from the ids so far, and trains the trajectory as one sample with the tool outputs masked', async () => {
    const { policy, service, of, turnsOf, resultsOf } = await run('trajectory');
    const decode = (ids: readonly number[]) => policy.tokenizer.decode(ids, false);
    const samples = of('sample') as SampleRecord[];
    expect(samples.map((s) => [s.session, s.turn, s.trajectoryFallback])).toEqual([
      ['g0.r0', 1, undefined],
      ['g0.r1', 1, undefined],
    ]);
    const [items] = service.trained;
    expect(items).toHaveLength(SCRIPTS.length);
    SCRIPTS.forEach((script, r) => {
      const turns = turnsOf(r);
      expect(turns.map((t) => t.response)).toEqual(script);
      const mask: number[] = [];
      for (let t = 0; t < turns.length; t++) {
        const [prompt, reply] = [turns[t].promptIds!, turns[t].tokenIds];
        if (t > 0) {
          // Step t's prompt is step t-1's prompt and reply, then the tool's answer as the template writes it.
          const before = [...turns[t - 1].promptIds!, ...turns[t - 1].tokenIds];
          expect(prompt.slice(0, before.length)).toEqual(before);
          const read = prompt.slice(before.length);
          expect(resultsOf(r, t - 1)).toHaveLength(1);
          expect(decode(read)).toBe(readAfter(resultsOf(r, t - 1)[0]));
          mask.push(...read.map(() => 0));
          // Rendered whole, Qwen3 leaves out the empty <think> block that step t-1's prompt ended in: that prompt would not join.
          const whole = policy.promptIds(turns[t].messages, { tools: TOOL_TRACK_TOOLS });
          expect(whole.slice(0, before.length)).not.toEqual(before);
          expect(decode(prompt)).toContain(`<think>\n\n</think>\n\n${script[t - 1]}<|im_end|>`);
          expect(decode(whole)).not.toContain(`<think>\n\n</think>\n\n${script[t - 1]}<|im_end|>`);
        }
        mask.push(...reply.map(() => 1));
      }
      // One sample: the first step's prompt, then every step's ids and what was read between them, the reads masked.
      const item = items[r];
      expect(item.messages).toEqual(turns[0].messages);
      expect(policy.promptIds(item.messages, { tools: item.tools })).toEqual(turns[0].promptIds);
      expect(item.tokenIds).toEqual([...turns.at(-1)!.promptIds!.slice(turns[0].promptIds!.length), ...turns.at(-1)!.tokenIds]);
      expect(item.lossMask).toEqual(mask);
      expect(samples[r].lossMask).toEqual(mask);
      expect(mask.filter((m) => m === 0).length).toBeGreaterThan(0);
    });
    expect(of('train_step')[0]).toMatchObject({ samples: SCRIPTS.length, skipped: null });

    // The evaluation reads its second step the same way the rollouts do.
    const greedy = service.requests.filter((r) => r.sampling.temperature === 0);
    expect(greedy.map((r) => r.continues?.messages)).toEqual([undefined, 3, undefined, 3]);
    expect(greedy.every((r) => r.tools === TOOL_TRACK_TOOLS)).toBe(true);
  }, 300_000);

  it('renders each step whole where the preset trains one sample per step, as the trainer renders its prompt', async () => {
    const { policy, service, of, turnsOf } = await run('step');
    expect(service.requests.every((r) => r.continues === undefined)).toBe(true);
    const samples = of('sample') as SampleRecord[];
    expect(samples).toHaveLength(SCRIPTS.flat().length);
    expect(samples.every((s) => s.lossMask === undefined && s.trajectoryFallback === undefined)).toBe(true);
    for (const turn of [...turnsOf(0), ...turnsOf(1)]) expect(turn.promptIds).toEqual(policy.promptIds(turn.messages, { tools: TOOL_TRACK_TOOLS }));
  }, 300_000);
});
