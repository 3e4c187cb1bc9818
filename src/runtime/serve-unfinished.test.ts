import { describe, expect, it } from 'vitest';
import { combinedAdvantages, opdAdvantages } from '../rl/advantages';
import type { ChatMessage } from '../rl/messages';
import { makePreset, topKSelectPreset } from '../rl/presets';
import type { InteractionRecord, RunRecord } from '../rl/records';
import { unfinishedTurns } from './serve-unfinished';

let ts = 0;
const interaction = (session: string, turn: number, messages: ChatMessage[], response: string, turnType: 'main' | 'side' = 'main'): InteractionRecord => ({
  kind: 'interaction',
  version: 0,
  ts: ++ts,
  session,
  turn,
  turnType,
  messages,
  response,
  tokenIds: [1],
  logprobs: [-1],
  startedAt: ts,
  finishedAt: ts,
});
const judged = (session: string, turn: number): RunRecord => ({
  kind: 'judge_result',
  version: 0,
  ts: ++ts,
  session,
  turn,
  judge: 'binary',
  score: 1,
  accepted: true,
  hint: null,
  teacherLogpCount: 0,
});
const options = {
  reply: (r: InteractionRecord): ChatMessage => ({ role: 'assistant', content: r.response }),
  paired: (s: string) => s.startsWith('conv-'),
  run: { method: 'combined' as const, preset: makePreset('combined') },
};
const user = (content: string): ChatMessage => ({ role: 'user', content });
const reply = (content: string): ChatMessage => ({ role: 'assistant', content });

describe('unfinishedTurns', () => {
  it('finds each session’s last main turn waiting, with its request counts; a side turn neither waits nor closes one', () => {
    const records: RunRecord[] = [
      interaction('carol', 1, [user('a')], 'A'),
      interaction('carol', 2, [user('memo')], 'M', 'side'),
      interaction('carol', 3, [user('a'), reply('A'), user('b')], 'B'),
      judged('carol', 1),
    ];
    const { waiting, unjudged } = unfinishedTurns(records, options);
    expect(unjudged).toEqual([]);
    expect(waiting).toEqual([
      { turn: expect.objectContaining({ session: 'carol', turn: 3, response: expect.objectContaining({ text: 'B' }) }), turns: 3, mainTurns: 2 },
    ]);
  });

  it('judges again a turn whose next state came but whose judgement was never committed, with the next state the server paired', () => {
    const records: RunRecord[] = [
      interaction('carol', 1, [user('a')], 'A'),
      interaction('carol', 2, [user('a'), reply('A'), user('no, redo it')], 'B'),
      // As OpenClaw sends it: a runtime-context message after the user's, which is not the next state.
      interaction('conv-0', 1, [user('x'), user('<<<context 1>>>')], 'X'),
      interaction('conv-0', 2, [user('x'), reply('X'), user('no, the other one'), user('<<<context 2>>>')], 'Y'),
    ];
    const { waiting, unjudged } = unfinishedTurns(records, options);
    expect(unjudged.map((t) => [t.session, t.turn, t.nextState?.content, t.closedBy])).toEqual([
      ['carol', 1, 'no, redo it', 'next-request'],
      ['conv-0', 1, 'no, the other one', 'next-request'],
    ]);
    expect(waiting.map((w) => `${w.turn.session}#${w.turn.turn}`)).toEqual(['carol#2', 'conv-0#2']);
  });

  it('leaves a session that ended: its waiting turn closed without a next state, and a later request starts it afresh', () => {
    const records: RunRecord[] = [
      interaction('carol', 1, [user('a')], 'A'),
      { kind: 'session_end', version: 0, ts: ++ts, session: 'carol', reason: 'timeout', turns: 1, mainTurns: 1, unjudgedTurn: 1 },
      interaction('dave', 1, [user('a')], 'A'),
      { kind: 'session_end', version: 0, ts: ++ts, session: 'dave', reason: 'explicit', turns: 1, mainTurns: 1, unjudgedTurn: 1 },
      interaction('dave', 2, [user('hello again')], 'H'),
    ];
    const { waiting, unjudged } = unfinishedTurns(records, options);
    expect(unjudged).toEqual([]);
    expect(waiting).toEqual([{ turn: expect.objectContaining({ session: 'dave', turn: 2 }), turns: 1, mainTurns: 1 }]);
  });

  describe('a turn judged but whose sample was never journaled (a kill -9 between the two commits)', () => {
    const teacherLogp = [-0.5, -0.25];
    const main = (session: string, turn: number, messages: ChatMessage[], response: string): InteractionRecord => ({
      ...interaction(session, turn, messages, response),
      tokenIds: [7, 8],
      logprobs: [-1, -2],
      tools: [{ type: 'function', function: { name: 'read' } }],
    });
    const hintResult = (session: string, turn: number): RunRecord => ({
      kind: 'judge_result',
      version: 0,
      ts: ++ts,
      session,
      turn,
      judge: 'hint',
      score: 1,
      accepted: true,
      hint: 'a warm one',
      teacherLogpCount: 2,
      teacherLogp,
    });
    const journaled: RunRecord[] = [
      main('erin', 1, [user('Name a colour.')], 'Blue.'),
      main('erin', 2, [user('Name a colour.'), reply('Blue.'), user('No, a warm one.')], 'Red.'),
      judged('erin', 1),
      hintResult('erin', 1),
    ];
    const sampleOf = (session: string, turn: number): RunRecord => ({
      kind: 'sample',
      version: 0,
      ts: ++ts,
      session,
      turn,
      trainable: true,
      promoted: false,
      reward: 1,
      advantages: { tokens: 2, mean: 0, min: 0, max: 0, meanAbs: 0, nonZero: 0 },
      perToken: [0, 0],
    });

    it('rebuilds its sample from the interaction and its judge results, as the loop assembled it, to buffer once', () => {
      const { unbuffered, unjudged } = unfinishedTurns(journaled, options);
      expect(unjudged).toEqual([]);
      const weights = options.run.preset.advantage.weights;
      expect(unbuffered).toEqual([
        expect.objectContaining({
          session: 'erin',
          turn: 1,
          version: 0,
          messages: [user('Name a colour.')],
          tools: [{ type: 'function', function: { name: 'read' } }],
          response: expect.objectContaining({ text: 'Blue.', tokenIds: [7, 8], logprobs: [-1, -2] }),
          reward: 1,
          advantages: combinedAdvantages(1, opdAdvantages(teacherLogp, [-1, -2]), weights),
          opdWeight: weights.opd,
          judged: true,
        }),
      ]);
    });

    it('rebuilds none where the sample was journaled (buffered or trained), an earlier resume left the turn behind, or the method dropped it', () => {
      expect(unfinishedTurns([...journaled, sampleOf('erin', 1)], options).unbuffered).toEqual([]);
      const leftBehind: RunRecord = {
        kind: 'runtime_event',
        version: 0,
        ts: ++ts,
        event: 'run_resumed',
        message: 'resumed',
        interrupted: [{ session: 'erin', turns: [1] }],
      };
      expect(unfinishedTurns([...journaled, leftBehind], options).unbuffered).toEqual([]);
      // OPD without an accepted hint gives no sample: the loop dropped the turn, and so does the rebuild.
      const opd = { ...options, run: { method: 'opd' as const, preset: makePreset('opd') } };
      const noHint = journaled.map((r) =>
        r.kind === 'judge_result' && r.judge === 'hint' ? { ...r, score: 0, accepted: false, hint: null, teacherLogpCount: 0, teacherLogp: undefined } : r,
      );
      expect(unfinishedTurns(noHint, opd).unbuffered).toEqual([]);
    });

    it('rebuilds none where the log cannot give the sample exactly: a judge result missing, or a top-k OPD term', () => {
      expect(unfinishedTurns(journaled.slice(0, -1), options).unbuffered).toEqual([]);
      const distill = { ...options, run: { method: 'combined' as const, preset: topKSelectPreset('combined', { advantage: { opdTerm: 'topk-distill' } }) } };
      expect(unfinishedTurns(journaled, distill).unbuffered).toEqual([]);
    });
  });
});
