/**
 * The run loop's additive options for the page: a person as the user (talk yourself: they
 * write the first message, see the conversation as it is, and end it with EndSessionRequest),
 * and resuming with the samples that were buffered but not trained on.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { CpuBackend } from '../gpu/cpu/backend';
import type { ChatMessage } from '../rl/messages';
import { makePreset } from '../rl/presets';
import type { InteractionRecord, JudgeResultRecord, RunRecord, SampleRecord, SessionEndRecord, TokenUpdateRecord } from '../rl/records';
import type { GenerateOptions, TextGenerator } from '../generators/generator';
import { createRules } from '../sims/rules/index';
import { createScenario } from '../sims/scenarios/index';
import type { BufferedSample } from '../rl/buffer';
import type { TrainingSample } from '../rl/samples';
import { EnginePolicyService } from './policy-service';
import { Policy } from '../gpu/policy';
import { DirSource } from '../models/source-node';
import type { RunConfig } from './run-config';
import { EndSessionRequest, RunLoop } from './runloop';
import { sharedProblems } from './problems';

const END = Symbol('end');

/** A person who types the scripted lines in order, ends the conversation at END, then waits. */
class ScriptedPerson implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label = 'scripted person';
  readonly seen: ChatMessage[][] = [];
  constructor(private readonly script: (string | typeof END)[]) {}
  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    this.seen.push(messages);
    const next = this.script.shift();
    if (next === END) throw new EndSessionRequest();
    if (next !== undefined) return next;
    return new Promise((_, reject) => opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason)));
  }
}

function talkConfig(dir: string, steps: number): RunConfig {
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    scenario: { id: 'talk' },
    method: 'combined',
    preset: makePreset('combined', { batch: { size: 2 }, finetune: { lora: { rank: 2 } }, judge: { maxNewTokens: 64 } }),
    models: { policy: { model: dir, backend: 'cpu' }, user: { kind: 'rules' }, judge: { kind: 'rules' }, evaluator: { kind: 'rules' } },
    seed: 1,
    problems: { source: 'builtin', count: 1 },
    schedule: { concurrentSessions: 1, steps, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
    sampling: { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 6 }, user: { temperature: 0.7, maxNewTokens: 64 } },
  };
}

async function setup(steps: number) {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const config = talkConfig(dir, steps);
  const policy = await Policy.load(new DirSource(dir), new CpuBackend());
  const service = new EnginePolicyService(policy, config.preset, config.seed, config.sampling.policy.temperature);
  const rules = createRules(createScenario(config.scenario));
  const records: RunRecord[] = [];
  const sink = { append: async (rs: RunRecord[]) => void records.push(...rs) };
  return { config, policy, service, rules, records, sink };
}

const of = <K extends RunRecord['kind']>(records: RunRecord[], kind: K) => records.filter((r) => r.kind === kind) as Extract<RunRecord, { kind: K }>[];

describe('a person as the user (talk yourself)', () => {
  it('takes the first message from the person, shows them the plain transcript, and ends the session on request', async () => {
    const { config, service, rules, records, sink } = await setup(1);
    const person = new ScriptedPerson([
      'Tell me a story about a cat.',
      'No, that is wrong. Please redo it and make it shorter.',
      'Thanks, that is great.',
      END,
      'Hello again.',
    ]);
    const loop = new RunLoop(
      config,
      { policy: service, user: person, judge: rules.judge, hintJudge: rules.hintJudge, evaluator: null },
      sharedProblems([{ id: 'talk', question: '', answer: '' }]),
      sink,
    );
    const result = await loop.run();
    expect(result).toMatchObject({ status: 'finished', step: 1 });

    const interactions = of(records, 'interaction') as InteractionRecord[];
    const s0 = interactions.filter((i) => i.session === 's0');
    expect(s0.map((i) => i.turn)).toEqual([1, 2, 3]);
    expect(s0[0].messages).toEqual([{ role: 'user', content: 'Tell me a story about a cat.' }]);
    // The person sees the conversation as the policy does: no simulator persona, no role swap.
    expect(person.seen[0]).toEqual([]);
    expect(person.seen[1]).toEqual([
      { role: 'user', content: 'Tell me a story about a cat.' },
      { role: 'assistant', content: s0[0].response },
    ]);

    const ends = of(records, 'session_end') as SessionEndRecord[];
    expect(ends.find((e) => e.session === 's0')).toMatchObject({ reason: 'explicit', mainTurns: 3 });
    const binary = (of(records, 'judge_result') as JudgeResultRecord[]).filter((r) => r.session === 's0' && r.judge === 'binary');
    expect(binary.map((r) => [r.turn, r.score])).toEqual([
      [1, -1],
      [2, 1],
    ]);
    // The last answer closed without a next state: unjudged, and Combined drops it as the
    // reference does (no hint, r = 0).
    const samples = (of(records, 'sample') as SampleRecord[]).filter((s) => s.session === 's0');
    expect(samples.map((s) => s.turn).sort()).toEqual([1, 2]);
    // After "New conversation" the next session starts with the person's next first message.
    expect(person.seen.length).toBeGreaterThanOrEqual(5);
    expect(person.seen[4]).toEqual([]);
  }, 120_000);
});

describe('resume with buffered samples', () => {
  it('trains first on the samples that were waiting, without logging them again', async () => {
    const { config, policy, service, rules, records, sink } = await setup(1);
    const prompt: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
    const [gen] = await policy.generate([prompt], { maxNewTokens: 4, sampling: { temperature: 1, topP: 1, topK: 0 }, seeds: [5] });
    const waiting = (session: string): BufferedSample<TrainingSample> => ({
      session,
      turn: 1,
      version: 0,
      messages: prompt,
      response: { text: gen.text, tokenIds: gen.tokens, logprobs: gen.logprobs },
      nextState: null,
      reward: 1,
      advantages: gen.tokens.map(() => 1),
      opdWeight: 0,
      judged: true,
      trainable: true,
      promoted: false,
    });
    const person = new ScriptedPerson([]);
    const loop = new RunLoop(
      config,
      { policy: service, user: person, judge: rules.judge, hintJudge: rules.hintJudge, evaluator: null },
      sharedProblems([{ id: 'talk', question: '', answer: '' }]),
      sink,
      {
        resume: { step: 0, version: 0, sessionsStarted: 7, samples: [waiting('s3'), waiting('s4')] },
      },
    );
    const result = await loop.run();
    expect(result).toMatchObject({ status: 'finished', step: 1, version: 1 });
    expect(of(records, 'sample')).toEqual([]);
    expect((of(records, 'token_update') as TokenUpdateRecord[]).map((u) => u.session).sort()).toEqual(['s3', 's4']);
    expect(of(records, 'train_step')[0]).toMatchObject({ step: 1, samples: 2 });
    // New sessions continue the numbering.
    expect(person.seen.length).toBe(1);
    expect(loop.snapshot().sessionsStarted).toBe(8);
  }, 120_000);
});
