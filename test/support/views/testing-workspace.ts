/**
 * A homework workspace run's records, written by hand in the shape the run loop writes them
 * (runloop-workspace.test.ts checks the loop's own): the scenario writes homework/0.txt, the
 * policy reads it with a tool call, answers, and appends its answer. For the view tests.
 */
import type { InteractionRecord, RunRecord } from '../../../src/rl/records';
import { WORKSPACE_TOOLS } from '../../../src/sims/workspace/tools';

export const HOMEWORK = 'Problem:\nOmar saves $15 a week and has $40. How many weeks until he has $190?\n\nSolution:\n';
export const ANSWER = 'He needs 190 - 40 = 150 more, and 150 / 15 = 10, so it takes 10 weeks.';
export const READ_CALL = '<tool_call>\n{"name": "read", "arguments": {"path": "homework/0.txt"}}\n</tool_call>';

function interaction(turn: number, messages: InteractionRecord['messages'], response: string, ts: number): InteractionRecord {
  return {
    kind: 'interaction',
    version: 0,
    ts,
    session: 's0',
    turn,
    turnType: 'main',
    messages,
    response,
    tokenIds: [1, 2],
    logprobs: [-0.5, -0.25],
    tools: structuredClone([...WORKSPACE_TOOLS]),
    startedAt: ts,
    finishedAt: ts + 1,
  };
}

/** `answer`: the text the policy appends (untrusted text in the hostile variant). */
export function workspaceRun(answer = ANSWER): RunRecord[] {
  const first = [
    { role: 'system' as const, content: 'You have a workspace.' },
    { role: 'user' as const, content: 'hey, my homework is in the file homework/0.txt in your workspace. can you read it?' },
  ];
  const afterRead = [...first, { role: 'assistant' as const, content: READ_CALL }, { role: 'tool' as const, content: HOMEWORK }];
  const append = `<tool_call>\n${JSON.stringify({ name: 'append', arguments: { path: 'homework/0.txt', content: answer } })}\n</tool_call>`;
  const afterAnswer = [
    ...afterRead,
    { role: 'assistant' as const, content: answer },
    { role: 'user' as const, content: 'ok now append it to the end of homework/0.txt' },
  ];
  return [
    { kind: 'workspace_file', version: 0, ts: 1000, workspace: 's0', session: 's0', path: 'homework/0.txt', op: 'write', content: HOMEWORK },
    interaction(1, first, READ_CALL, 1010),
    interaction(2, afterRead, answer, 1020),
    interaction(3, afterAnswer, append, 1030),
    { kind: 'workspace_file', version: 0, ts: 1031, workspace: 's0', session: 's0', turn: 3, path: 'homework/0.txt', op: 'append', content: HOMEWORK + answer },
  ];
}
