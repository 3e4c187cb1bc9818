import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_ENVELOPES } from '../rl/envelopes';
import { splitHint } from '../rl/hints';
import { HintShuffler } from '../rl/hint-shuffle';
import { makePreset, topKSelectPreset, type MethodPreset } from '../rl/presets';
import { MAX_VOTES } from '../rl/preset-limits';
import type { PolicyResponse } from '../rl/samples';
import type { ClosedTurn } from '../rl/sessions';
import { validateRecord } from '../rl/validate';
import type { TextGenerator } from '../generators/generator';
import { otherChildHints } from '../sims/scenarios/other-child';
import { RulesJudge } from '../sims/rules/judge';
import { judgeTurn, voteSeed, type JudgeDeps } from './judge-turn';
import type { ScoredTopK } from './policy-service';

describe('voteSeed', () => {
  it('gives every vote of every judge on every turn its own seed', () => {
    const seen = new Set<number>();
    for (let turn = 1; turn <= 20; turn++)
      for (const judge of ['binary', 'hint'] as const) for (let vote = 0; vote < MAX_VOTES; vote++) seen.add(voteSeed(7, turn, judge, vote));
    expect(seen.size).toBe(20 * 2 * MAX_VOTES);
  });

  it('keeps the seeds recorded runs were sampled with', () => {
    expect(voteSeed(1, 3, 'binary', 2)).toBe(1 + 3 * 1000 + 2);
    expect(voteSeed(1, 3, 'hint', 0)).toBe(1 + 3 * 1000 + 100);
  });
});

describe('judgeTurn with top-k hint selection', () => {
  const long = 'Write the steps as plain sentences.';
  const short = 'Show each step.';
  const mid = 'Give only the final number.';
  const hints = [long, short, mid, 'Rejected.'];
  const hintJudge: TextGenerator = {
    kind: 'rules',
    label: 'scripted hint judge',
    // Vote v (by its seed) writes hints[v]; the last vote rejects.
    generate: async (_m, o) => {
      const v = o!.seed! - voteSeed(0, 1, 'hint', 0);
      return v === 3 ? 'No.\n\\boxed{-1}' : `[HINT_START]${hints[v]}[HINT_END]\n\\boxed{1}`;
    },
  };
  const turn: ClosedTurn<PolicyResponse> = {
    session: 's0',
    turn: 1,
    turnType: 'main',
    version: 0,
    messages: [{ role: 'user', content: 'What is 2 + 3?' }],
    response: { text: 'five', tokenIds: [10, 11, 12], logprobs: [-1, -1, -1] },
    at: 0,
    nextState: { role: 'user', content: 'Redo it in plain sentences.' },
    closedBy: 'next-request',
    closedAt: 1,
  };
  const student = [
    [1, 2, 3, 4],
    [5, 6, 7, 8],
    [9, 10, 11, 12],
  ];
  // Per hint: its teacher's top-4 sets (overlap with the student per token) and log-probs.
  const teachers: Record<string, ScoredTopK> = {
    [short]: {
      topIds: [
        [1, 2, 90, 91],
        [5, 6, 90, 91],
        [9, 10, 90, 91],
      ],
      logprobs: [-0.5, -0.5, -0.5],
    }, // 2, 2, 2 -> 6
    [mid]: {
      topIds: [
        [4, 3, 2, 1],
        [5, 6, 7, 8],
        [90, 91, 92, 93],
      ],
      logprobs: [-0.2, -3.5, -1],
    }, // 4, 4, 0 -> 8
    [long]: {
      topIds: [
        [90, 91, 92, 93],
        [90, 91, 92, 93],
        [9, 10, 11, 12],
      ],
      logprobs: [-2, -2, -0.1],
    }, // 0, 0, 4 -> 4
  };
  function fakePolicy() {
    const calls: { policy: string; hints: (string | null)[] }[] = [];
    const policy: JudgeDeps['policy'] = {
      score: async (items) => items.map((it) => teachers[splitHint(it.messages.at(-1)!.content).hint!].logprobs),
      scoreTopK: async (items, which, k) => {
        expect(k).toBe(4);
        const hs = items.map((it) => splitHint(it.messages.at(-1)!.content).hint);
        calls.push({ policy: which, hints: hs });
        // Asked for log-probs at given ids: -id/100, less one nat per hint index (a teacher's own mark).
        const at = (it: (typeof items)[number], mark: number) => (it.at ? { atLogp: it.at.map((set) => set.map((id) => -id / 100 - mark)) } : {});
        return hs.map((h, i) => (h === null ? { topIds: student, logprobs: [-1, -1, -1] } : { ...teachers[h], ...at(items[i], hints.indexOf(h)) }));
      },
    };
    return { policy, calls };
  }
  const deps = (preset: MethodPreset, policy: JudgeDeps['policy']): JudgeDeps => ({
    judge: hintJudge,
    hintJudge,
    policy,
    preset,
    seed: 0,
    now: () => 5,
  });

  it("keeps the candidate whose teacher's top-k sets overlap the student's most, and clips its A_OPD", async () => {
    const { policy, calls } = fakePolicy();
    const preset = topKSelectPreset('opd', { judge: { hintVotes: 4 } });
    const { judgement, records } = await judgeTurn(turn, deps(preset, policy));
    // The student is scored once without a hint, under the serving policy; the candidates, shortest first, under the teacher.
    expect(calls).toEqual([
      { policy: 'current', hints: [null] },
      { policy: 'initial', hints: [short, mid, long] },
    ]);
    // Teacher (mid) minus rollout: 0.8, -2.5, 0 -> clipped to 1: 0.8, -1, 0.
    expect(judgement.opd).toEqual([0.8, -1, 0].map((x) => expect.closeTo(x, 12)));
    expect(judgement.opdClip).toEqual({ clip: 1, teacherLogp: [-0.2, -3.5, -1] });
    const result = records.find((r) => r.kind === 'judge_result')!;
    expect(result).toMatchObject({ hint: mid, accepted: true, score: 1, teacherLogp: [-0.2, -3.5, -1] });
    expect(result.kind === 'judge_result' && result.selection).toEqual({
      rule: 'topk-sequence',
      k: 4,
      clip: 1,
      tokens: 3,
      winner: 1,
      candidates: [
        { hint: short, overlap: 6, tokensWon: 0 },
        { hint: mid, overlap: 8, tokensWon: 3 },
        { hint: long, overlap: 4, tokensWon: 0 },
      ],
    });
    expect(() => validateRecord(JSON.parse(JSON.stringify(result)), 'judge_result')).not.toThrow();
  });

  it('per token: each token takes the teacher log-prob of the candidate that wins it', async () => {
    const { policy } = fakePolicy();
    const preset = topKSelectPreset('opd', { judge: { hintVotes: 4 }, advantage: { hintSelection: { rule: 'topk-token', clip: 0 } } });
    const { judgement, records } = await judgeTurn(turn, deps(preset, policy));
    // Token winners: mid (4), mid (4), long (4): teacher -0.2, -3.5, -0.1; unclipped.
    expect(judgement.opd).toEqual([0.8, -2.5, 0.9].map((x) => expect.closeTo(x, 12)));
    expect(judgement.opdClip).toBeUndefined();
    const result = records.find((r) => r.kind === 'judge_result');
    expect(result).toMatchObject({ hint: mid, selection: { rule: 'topk-token', winner: 1 } });
    expect(result!.kind === 'judge_result' && result!.selection!.candidates.map((c) => c.tokensWon)).toEqual([0, 2, 1]);
  });

  it("the top-k OPD term: the student's sets, and each token's winning teacher read over them, beside the sampled-token A_OPD", async () => {
    const { policy, calls } = fakePolicy();
    const preset = topKSelectPreset('opd', { judge: { hintVotes: 4 }, advantage: { hintSelection: { rule: 'topk-token' }, opdTerm: 'topk-distill' } });
    const { judgement } = await judgeTurn(turn, deps(preset, policy));
    expect(calls).toHaveLength(2);
    // Token winners mid (index 2), mid, long (index 0), read over the student's sets.
    const mark = [2, 2, 0];
    expect(judgement.opdTopK).toEqual({ clip: 1, ids: student, teacherLogp: student.map((set, t) => set.map((id) => -id / 100 - mark[t])) });
    expect(judgement.opd).toEqual([0.8, -1, 0.9].map((x) => expect.closeTo(x, 12)));
  });

  it('the top-k OPD term under the longest-hint rule: one student and one teacher pass, no selection', async () => {
    const { policy, calls } = fakePolicy();
    const preset = makePreset('combined', { judge: { hintVotes: 4 }, advantage: { opdTerm: 'topk-distill' } });
    const { judgement, records } = await judgeTurn(turn, deps(preset, policy));
    expect(calls).toEqual([
      { policy: 'current', hints: [null] },
      { policy: 'initial', hints: [long] },
    ]);
    expect(judgement.opdTopK).toEqual({ clip: 0, ids: student, teacherLogp: student.map((set) => set.map((id) => -id / 100)) });
    expect(records.find((r) => r.kind === 'judge_result')).not.toHaveProperty('selection');
  });

  it("the default preset keeps the paper's longest hint, unclipped, with no top-k pass", async () => {
    const { policy, calls } = fakePolicy();
    const preset = makePreset('opd', { judge: { hintVotes: 4 } });
    const { judgement, records } = await judgeTurn(turn, deps(preset, policy));
    expect(calls).toEqual([]);
    expect(judgement.opd).toEqual([-1, -1, 0.9].map((x) => expect.closeTo(x, 12)));
    expect(records.find((r) => r.kind === 'judge_result')).toMatchObject({ hint: long });
    expect(records.find((r) => r.kind === 'judge_result')).not.toHaveProperty('selection');
  });

  /** A policy with a vocabulary of `V`: each teacher ranks its own top-4 first, then every other id in order. */
  function distributionPolicy(V: number) {
    const calls: { policy: string; hints: (string | null)[]; k: number; at: boolean }[] = [];
    const ranking = (h: string, t: number) => [
      ...teachers[h].topIds[t],
      ...Array.from({ length: V }, (_, id) => id).filter((id) => !teachers[h].topIds[t].includes(id)),
    ];
    const policy: JudgeDeps['policy'] = {
      score: async () => {
        throw new Error('the reverse-KL term reads the teacher through scoreTopK');
      },
      scoreTopK: async (items, which, k) => {
        const hs = items.map((it) => splitHint(it.messages.at(-1)!.content).hint);
        calls.push({ policy: which, hints: hs, k, at: items.some((it) => it.at) });
        return hs.map((h, i) => {
          if (h === null) return { topIds: student, logprobs: [-1, -1, -1] };
          const it = items[i];
          return {
            topIds: [0, 1, 2].map((t) => ranking(h, t).slice(0, Math.min(k, V))),
            logprobs: teachers[h].logprobs,
            ...(it.at ? { atLogp: it.at.map((set) => set.map((id) => -id / 100 - hints.indexOf(h))) } : {}),
          };
        });
      },
    };
    return { policy, calls, ranking };
  }

  it("the reverse-KL term over the whole vocabulary: the longest hint's teacher, every id at every position, and its log-probs over them", async () => {
    const { policy, calls, ranking } = distributionPolicy(100);
    const preset = makePreset('combined', { judge: { hintVotes: 4 }, advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 0, tail: false } } });
    const { judgement, records } = await judgeTurn(turn, deps(preset, policy));
    // One pass for the ids (every one), one for the log-probs over them; no student pass.
    expect(calls).toEqual([
      { policy: 'initial', hints: [long], k: 2 ** 31 - 1, at: false },
      { policy: 'initial', hints: [long], k: 1, at: true },
    ]);
    const ids = [0, 1, 2].map((t) => ranking(long, t));
    expect(ids[0]).toHaveLength(100);
    expect(judgement.opdTopK).toEqual({ clip: 0, term: 'reverse-kl', ids, teacherLogp: ids.map((set) => set.map((id) => -id / 100)) });
    // The sampled-token A_OPD stays beside it, as logged (the sample's advantages will not hold it).
    expect(judgement.opd).toEqual([-1, -1, 0.9].map((x) => expect.closeTo(x, 12)));
    expect(records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')).toMatchObject({ hint: long, accepted: true, teacherLogp: [-2, -2, -0.1] });
  });

  it("the reverse-KL term under top-k selection per token: each token's winning teacher's own top-k, with a tail", async () => {
    const { policy, calls } = distributionPolicy(100);
    const preset = topKSelectPreset('opd', {
      judge: { hintVotes: 4 },
      advantage: { hintSelection: { rule: 'topk-token' }, opdTerm: 'reverse-kl', reverseKl: { k: 2, tail: true } },
    });
    const { judgement } = await judgeTurn(turn, deps(preset, policy));
    // Selection as before (k = 4), then the two winning teachers (mid wins tokens 0-1, long token 2) at k = 2.
    expect(calls).toEqual([
      { policy: 'current', hints: [null], k: 4, at: false },
      { policy: 'initial', hints: [short, mid, long], k: 4, at: false },
      { policy: 'initial', hints: [mid, long], k: 2, at: false },
      { policy: 'initial', hints: [mid, long], k: 1, at: true },
    ]);
    expect(judgement.opdTopK).toEqual({
      clip: 0,
      term: 'reverse-kl-tail',
      ids: [
        [4, 3],
        [5, 6],
        [9, 10],
      ],
      teacherLogp: [
        [-2.04, -2.03],
        [-2.05, -2.06],
        [-0.09, -0.1],
      ].map((set) => set.map((x) => expect.closeTo(x, 12))),
    });
    expect(judgement.opd).toEqual([0.8, -1, 0.9].map((x) => expect.closeTo(x, 12)));
  });

  it('the reverse-KL term over the whole vocabulary refuses a vocabulary too large for the run file', async () => {
    const { policy } = distributionPolicy(9000);
    const preset = makePreset('opd', { judge: { hintVotes: 4 }, advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 0, tail: false } } });
    await expect(judgeTurn(turn, deps(preset, policy))).rejects.toThrow(
      /^advantage\.reverseKl\.k is 0 \(the whole vocabulary\) but this policy has 9000 tokens, past 8192; set advantage\.reverseKl\.k to 1-64/,
    );
  });

  it('no candidate: no OPD sample and no scoring', async () => {
    const { policy, calls } = fakePolicy();
    const preset = topKSelectPreset('opd', { judge: { hintVotes: 4, minHintChars: 100 } });
    const { judgement } = await judgeTurn(turn, deps(preset, policy));
    expect(judgement.opd).toBeNull();
    expect(calls).toEqual([]);
  });
});

describe('judgeTurn with shuffled hints (the control)', () => {
  const preset = makePreset('combined', { advantage: { hintSource: 'shuffled' } });
  const judge: TextGenerator = { kind: 'rules', label: 'scripted judge', generate: async () => 'No.\n\\boxed{-1}' };
  // Each session's hint judge names its own session, so the test can see whose hint was used.
  const hintJudge: TextGenerator = {
    kind: 'rules',
    label: 'scripted hint judge',
    generate: async (m) => `[HINT_START]Do what ${m.at(-1)!.content.match(/session \w+/)![0]} asked.[HINT_END]\n\\boxed{1}`,
  };
  const turnOf = (session: string): ClosedTurn<PolicyResponse> => ({
    session,
    turn: 1,
    turnType: 'main',
    version: 0,
    messages: [{ role: 'user', content: 'Tell me a story.' }],
    response: { text: 'A story.', tokenIds: [1, 2], logprobs: [-1, -1] },
    at: 0,
    nextState: { role: 'user', content: `No, says session ${session}.` },
    closedBy: 'next-request',
    closedAt: 1,
  });

  it("conditions the teacher on another session's accepted hint and records the judge's own beside it", async () => {
    const scored: string[] = [];
    const deps: JudgeDeps = {
      judge,
      hintJudge,
      policy: {
        score: async (items) => items.map((it) => (scored.push(it.messages.map((m) => m.content).join('\n')), it.tokenIds.map(() => -0.5))),
      },
      preset,
      seed: 1,
      now: () => 0,
      shuffler: new HintShuffler(),
    };
    const first = await judgeTurn(turnOf('a'), deps);
    // No other session has a hint yet: no teacher, no OPD sample, the judge's hint kept.
    expect(first.judgement.opd).toBeNull();
    const firstResult = first.records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')!;
    expect(firstResult).toMatchObject({ hint: null, judgeHint: 'Do what session a asked.', accepted: false });
    const second = await judgeTurn(turnOf('b'), deps);
    expect(second.judgement.opd).toEqual([0.5, 0.5]);
    const result = second.records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')!;
    expect(result).toMatchObject({ hint: 'Do what session a asked.', judgeHint: 'Do what session b asked.', accepted: true });
    for (const r of [...first.records, ...second.records]) validateRecord(r, 'test');
    expect(scored).toHaveLength(1);
    expect(scored[0]).toContain('session a asked');
    expect(scored[0]).not.toContain('session b asked');
  });

  it('refuses to run without the run’s pool of hints', async () => {
    const deps: JudgeDeps = { judge, hintJudge, policy: { score: async () => [] }, preset, seed: 1, now: () => 0 };
    await expect(judgeTurn(turnOf('a'), deps)).rejects.toThrow(/HintShuffler/);
  });
});

describe('judgeTurn with another child’s hints (the other-child control)', () => {
  const preset = makePreset('opd', { advantage: { hintSource: 'other-child' } });
  const judge: TextGenerator = { kind: 'rules', label: 'scripted judge', generate: async () => 'No.\n\\boxed{-1}' };
  const hintJudge: TextGenerator = {
    kind: 'rules',
    label: 'scripted hint judge',
    generate: async () => "[HINT_START]Please call my dog Max in the story, with Max's ball.[HINT_END]\n\\boxed{1}",
  };
  const turn: ClosedTurn<PolicyResponse> = {
    session: 's0',
    turn: 1,
    turnType: 'main',
    version: 0,
    messages: [{ role: 'user', content: 'Once upon a time, a dog' }],
    response: { text: ' ran home.', tokenIds: [1, 2], logprobs: [-1, -1] },
    at: 0,
    nextState: { role: 'user', content: 'No, my dog is called Max!' },
    closedBy: 'next-request',
    closedAt: 1,
  };
  const other = otherChildHints({ subject: 'dog', name: 'Max', favourite: 'ball' }, 1);

  it("conditions the teacher on the judge's hint rewritten for the other child and records the judge's own and whose it became", async () => {
    const scored: string[] = [];
    const deps: JudgeDeps = {
      judge,
      hintJudge,
      policy: {
        score: async (items) => items.map((it) => (scored.push(it.messages.map((m) => m.content).join('\n')), it.tokenIds.map(() => -0.5))),
      },
      preset,
      seed: 1,
      now: () => 0,
      rewriteHint: other,
    };
    const { judgement, records } = await judgeTurn(turn, deps);
    expect(judgement.opd).toEqual([0.5, 0.5]);
    const { subject, name, favourite } = other.child;
    const rewritten = `Please call my ${subject} ${name} in the story, with ${name}'s ${favourite}.`;
    const result = records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')!;
    expect(result).toMatchObject({
      hint: rewritten,
      judgeHint: "Please call my dog Max in the story, with Max's ball.",
      hintFor: `${subject}/${name}/${favourite}`,
      accepted: true,
    });
    for (const r of records) validateRecord(r, 'test');
    expect(scored).toHaveLength(1);
    expect(scored[0]).toContain(`[user's hint / instruction]\n${rewritten}`);
    expect(scored[0]).not.toMatch(/\bMax\b/);
  });

  it('refuses to run without the other child', async () => {
    const deps: JudgeDeps = { judge, hintJudge, policy: { score: async () => [] }, preset, seed: 1, now: () => 0 };
    await expect(judgeTurn(turn, deps)).rejects.toThrow(/rewriteHint/);
  });

  it('leaves the judge’s hint as it is under the judge’s own hint source', async () => {
    const deps: JudgeDeps = {
      judge,
      hintJudge,
      policy: { score: async (items) => items.map((it) => it.tokenIds.map(() => -0.5)) },
      preset: makePreset('opd'),
      seed: 1,
      now: () => 0,
      rewriteHint: other,
    };
    const { records } = await judgeTurn(turn, deps);
    const result = records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')!;
    expect(result).toMatchObject({ hint: "Please call my dog Max in the story, with Max's ball." });
    expect(result).not.toHaveProperty('judgeHint');
    expect(result).not.toHaveProperty('hintFor');
  });
});

describe('judgeTurn on a served agent’s next state', () => {
  const fixture = JSON.parse(readFileSync(new URL('../../test/fixtures/openclaw-envelopes.json', import.meta.url), 'utf8')) as {
    cases: { raw: string; person: string }[];
  };
  const juniper = fixture.cases.filter((c) => c.person === 'no, her name is Juniper');
  const turnWith = (content: string): ClosedTurn<PolicyResponse> => ({
    session: 'conv-0',
    turn: 1,
    turnType: 'main',
    version: 0,
    messages: [{ role: 'user', content: '[Sat 2026-12-05 10:12 UTC] Write a story about my cat.' }],
    response: { text: 'Once upon a time, a cat named Tom sat on a mat.', tokenIds: [4, 5], logprobs: [-1, -1] },
    at: 0,
    nextState: { role: 'user', content },
    closedBy: 'next-request',
    closedAt: 1,
  });
  const deps = (judge: TextGenerator, hintJudge: TextGenerator): JudgeDeps => ({
    judge,
    hintJudge,
    policy: { score: async (items) => items.map((it) => it.tokenIds.map(() => -0.5)) },
    preset: makePreset('combined'),
    seed: 1,
    now: () => 0,
    envelopes: CLIENT_ENVELOPES,
  });
  /** A record as the judges wrote it, less the note of what was stripped. */
  const judged = (records: readonly object[]) => records.map((r) => ({ ...r, nextState: undefined }));

  it('judges "no, her name is Juniper" as a correction with or without OpenClaw’s envelope (rules judge)', async () => {
    expect(juniper.length).toBeGreaterThan(3);
    const rules = deps(new RulesJudge('binary'), new RulesJudge('hint'));
    const bare = await judgeTurn(turnWith('no, her name is Juniper'), rules);
    expect(bare.judgement.reward).toBe(-1);
    expect(bare.records.find((r) => r.kind === 'judge_result' && r.judge === 'hint')).toMatchObject({ hint: expect.stringContaining('Juniper') });
    for (const { raw } of juniper) {
      const wrapped = await judgeTurn(turnWith(raw), rules);
      expect(judged(wrapped.records)).toEqual(judged(bare.records));
      expect(JSON.stringify(wrapped.records.map((r) => (r.kind === 'judge_result' ? r.hint : r.raw)))).not.toMatch(/2026|Queued/);
    }
  });

  it('gives an LLM judge the same prompt with or without the envelope', async () => {
    const prompts: string[] = [];
    const llm: TextGenerator = {
      kind: 'endpoint',
      label: 'recording judge',
      generate: async (messages) => (prompts.push(JSON.stringify(messages)), '\\boxed{-1}'),
    };
    await judgeTurn(turnWith('no, her name is Juniper'), deps(llm, llm));
    const bare = [...prompts];
    for (const { raw } of juniper) {
      prompts.length = 0;
      await judgeTurn(turnWith(raw), deps(llm, llm));
      expect(prompts).toEqual(bare);
    }
  });

  it('keeps the raw next state beside the cleaned one in each judge_result, and a valid record', async () => {
    const { raw } = juniper[0];
    const { records } = await judgeTurn(turnWith(raw), deps(new RulesJudge('binary'), new RulesJudge('hint')));
    const results = records.filter((r) => r.kind === 'judge_result');
    expect(results.map((r) => r.nextState)).toEqual([
      { raw, cleaned: 'no, her name is Juniper' },
      { raw, cleaned: 'no, her name is Juniper' },
    ]);
    for (const r of records) expect(validateRecord(r, 'judge-turn')).toEqual(r);
    const bare = await judgeTurn(turnWith('no, her name is Juniper'), deps(new RulesJudge('binary'), new RulesJudge('hint')));
    expect(bare.records.some((r) => 'nextState' in r)).toBe(false);
  });

  it('reads a reply whose only sign of a correction is its leading "no" as one once the stamp is gone', async () => {
    const raw = '[Sat 2026-12-05 10:13 UTC] no, the other one';
    const served = deps(new RulesJudge('binary'), new RulesJudge('hint'));
    expect((await judgeTurn(turnWith(raw), served)).judgement.reward).toBe(-1);
    // A run that strips nothing (its users are simulated) reads the stamp as the start of the reply.
    const { envelopes: _none, ...unstripped } = served;
    expect((await judgeTurn(turnWith(raw), unstripped)).judgement.reward).toBe(0);
  });
});
