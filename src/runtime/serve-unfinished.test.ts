import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../rl/messages';
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
const options = { reply: (r: InteractionRecord): ChatMessage => ({ role: 'assistant', content: r.response }), paired: (s: string) => s.startsWith('conv-') };
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
});
