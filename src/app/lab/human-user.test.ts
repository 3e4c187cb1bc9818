import { describe, expect, it } from 'vitest';
import { HumanUser, type HumanTurn } from './human-user';
import { sharedProblems } from '../../runtime/problems';
import type { RunRecord } from '../../rl/records';

describe('HumanUser', () => {
  it('resolves generate() with the person\u2019s reply and shows them the conversation while waiting', async () => {
    const seen: (HumanTurn | null)[] = [];
    const user = new HumanUser((t) => seen.push(t));
    expect(user.submit('too early')).toBe(false);
    const reply = user.generate([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect(user.waiting).toBe(true);
    expect(seen.at(-1)).toEqual({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });
    expect(user.submit('   ')).toBe(false);
    expect(user.submit('  thanks!  ')).toBe(true);
    await expect(reply).resolves.toBe('thanks!');
    expect(user.waiting).toBe(false);
    expect(seen.at(-1)).toBeNull();
    expect(user.submit('again')).toBe(false);
  });

  it('rejects with an AbortError when the run stops', async () => {
    const user = new HumanUser();
    const controller = new AbortController();
    const reply = user.generate([], { signal: controller.signal });
    controller.abort(new DOMException('run stopped', 'AbortError'));
    await expect(reply).rejects.toMatchObject({ name: 'AbortError' });
    expect(user.waiting).toBe(false);
    await expect(user.generate([], { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('"New conversation" ends the session: now if waiting, else at the next question', async () => {
    const user = new HumanUser();
    const waiting = user.generate([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    user.endConversation();
    await expect(waiting).rejects.toMatchObject({ name: 'EndSessionRequest' });
    // Pressed while the policy was answering: the next ask ends the session.
    user.endConversation();
    await expect(
      user.generate([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ]),
    ).rejects.toMatchObject({ name: 'EndSessionRequest' });
    // A conversation that has not started has nothing to end: it waits for the first message.
    user.endConversation();
    const first = user.generate([]);
    expect(user.waiting).toBe(true);
    user.submit('hello');
    await expect(first).resolves.toBe('hello');
  });

  it('refuses a second question while one is pending', async () => {
    const user = new HumanUser();
    void user.generate([]);
    await expect(user.generate([])).rejects.toThrow(/one session at a time/);
  });
});

describe('HumanUser driving the run loop (talk yourself on the tiny model)', () => {
  it('each reply closes the previous turn for the judge, and New conversation starts a new session', async () => {
    const { tinyModel } = await import('../../../test/fixtures/tiny-model');
    const { CpuBackend } = await import('../../gpu/cpu/backend');
    const { Policy } = await import('../../gpu/policy');
    const { DirSource } = await import('../../models/source-node');
    const { EnginePolicyService } = await import('../../runtime/policy-service');
    const { RunLoop } = await import('../../runtime/runloop');
    const { createRules } = await import('../../sims/rules/index');
    const { createScenario } = await import('../../sims/scenarios/index');
    const { defaultSetup, toRunConfig, withScenario } = await import('./setup');

    const { dir } = await tinyModel({ family: 'qwen3' });
    const setup = withScenario(defaultSetup({ webgpu: false }), 'talk');
    setup.preset.batch.size = 3;
    setup.schedule.steps = 1;
    setup.sampling.policy.maxNewTokens = 5;
    const config = toRunConfig(setup, dir);
    const service = new EnginePolicyService(
      await Policy.load(new DirSource(dir), new CpuBackend()),
      config.preset,
      config.seed,
      config.sampling.policy.temperature,
    );
    const rules = createRules(createScenario(config.scenario));
    const records: RunRecord[] = [];
    // The person: answers each question from a script as soon as it is asked.
    const script = ['Write me a poem about the sea.', 'No, that is wrong. Redo it please.', 'NEW', 'Tell me a joke.', 'Thanks, great!', 'Perfect, thank you.'];
    const user: HumanUser = new HumanUser((turn) => {
      if (!turn) return;
      const line = script.shift();
      queueMicrotask(() => (line === 'NEW' ? user.endConversation() : line !== undefined && user.submit(line)));
    });
    const loop = new RunLoop(
      config,
      { policy: service, user, judge: rules.judge, hintJudge: rules.hintJudge, evaluator: null },
      sharedProblems([{ id: 'talk', question: '', answer: '' }]),
      {
        append: async (rs) => void records.push(...rs),
      },
    );
    const result = await loop.run();
    expect(result).toMatchObject({ status: 'finished', step: 1 });
    const firsts = records.filter((r) => r.kind === 'interaction' && r.turn === 1).map((r) => r.kind === 'interaction' && r.messages[0].content);
    expect(firsts.slice(0, 2)).toEqual(['Write me a poem about the sea.', 'Tell me a joke.']);
    expect(records.find((r) => r.kind === 'session_end' && r.session === 's0')).toMatchObject({ reason: 'explicit', mainTurns: 2 });
    const verdicts = records
      .filter((r) => r.kind === 'judge_result' && r.judge === 'binary')
      .map((r) => r.kind === 'judge_result' && [r.session, r.turn, r.score]);
    expect(verdicts).toContainEqual(['s0', 1, -1]);
    expect(verdicts).toContainEqual(['s1', 1, 1]);
  }, 120_000);
});
