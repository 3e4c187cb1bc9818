import type { ChatMessage } from './messages';

/**
 * Judge prompts. Both judges read the same two things, the assistant's action a_t and the
 * next state s_{t+1}, so the user message is built by one function; the system messages
 * differ because the binary judge classifies while the hint judge extracts a correction.
 *
 * The next state's role is shown too, as the reference's judge prompt does, because "user
 * reply" and "tool result" call for different readings (a tool result exists because the action
 * called the tool: without an error it is progress, an error is a failure of the action).
 *
 * The hint judge is told, as the reference's is, that a tool result without an error is no
 * hindsight: the action could not have known what its own call would return.
 *
 * The binary classes follow the reference judge's boundaries in the project's own words: a
 * request to change the answer is a correction even when worded as a new instruction, and a
 * new question unrelated to the answer is ambiguous, not progress.
 */

function describeNextState(role: ChatMessage['role']): string {
  switch (role) {
    case 'user':
      return "the user's reply";
    case 'tool':
      return 'the tool / environment result';
    default:
      return `a message with role "${role}"`;
  }
}

function judgeUserMessage(action: string, nextState: ChatMessage, closing: string): ChatMessage {
  const content =
    `## Assistant output (turn t)\n${action}\n\n` +
    `## Next state (turn t+1, role: ${nextState.role}, ${describeNextState(nextState.role)})\n` +
    `${nextState.content}\n\n${closing}`;
  return { role: 'user', content };
}

const BINARY_SYSTEM =
  'You are a process reward model. You judge one action of an AI assistant by what ' +
  'happened right after it.\n' +
  "You are shown the assistant's output and the next state: either the user's reply or " +
  'the result a tool / the environment returned.\n' +
  'Decide which of three classes the next state shows:\n' +
  '- progress: the task went on as the user wanted: the user accepts the answer, thanks the ' +
  'assistant, or goes on to the next step of the same task; a tool call returned a result ' +
  'without an error. Answer \\boxed{1}.\n' +
  '- correction / redo: the user asks for a redo or a retry, corrects the assistant, repeats or ' +
  'rephrases the same request, complains, or asks for the answer to be changed; the tool or ' +
  'environment reports an error. Answer \\boxed{-1}.\n' +
  '- ambiguous: the next state says nothing clear about this output, for example a question ' +
  'on an unrelated topic, or too little to tell. Answer \\boxed{0}.\n' +
  'A request to change the answer is a correction even when it is worded as a new ' +
  'instruction ("make it shorter", "use simpler words"): answer \\boxed{-1} for it, not \\boxed{0}.\n' +
  'Think briefly, then end with exactly one of \\boxed{1}, \\boxed{-1} or \\boxed{0}. ' +
  'Only the last \\boxed{} in your answer counts.';

const HINT_SYSTEM =
  'You are a process reward model that extracts hindsight hints.\n' +
  "You are shown the assistant's output at turn t and the next state at turn t+1 (the " +
  "user's reply or a tool / environment result).\n" +
  'Decide whether the next state reveals information that would have made the output at ' +
  'turn t better (a correction, a preference, a missing requirement, an error message).\n' +
  'A tool result exists because the output called the tool, so it was not there to be known ' +
  'before: a result without an error shows the call was right and is not such information.\n' +
  '- If it does, answer \\boxed{1} and write a hint of 1-3 sentences, concrete and ' +
  'actionable, addressed to the assistant, between [HINT_START] and [HINT_END].\n' +
  '- If it does not, answer \\boxed{-1} and write no hint block.\n' +
  'Only the last \\boxed{} and the last [HINT_START]...[HINT_END] block in your answer count.';

/**
 * Messages for the binary (evaluative) judge: progress `\boxed{1}`, correction/redo
 * `\boxed{-1}`, ambiguous `\boxed{0}`.
 *
 * @param action - the assistant output a_t being judged (its text as the user saw it)
 * @param nextState - s_{t+1}: the last message of the session's next main request
 * @returns a system and a user message, ready for a chat template
 */
export function buildBinaryJudgePrompt(action: string, nextState: ChatMessage): ChatMessage[] {
  return [
    { role: 'system', content: BINARY_SYSTEM },
    judgeUserMessage(action, nextState, 'Classify the assistant output. Think, then answer \\boxed{1}, \\boxed{-1} or \\boxed{0}.'),
  ];
}

/**
 * Messages for the hint (directive, OPD) judge: `\boxed{1}` plus a
 * `[HINT_START]...[HINT_END]` block when the next state carries useful hindsight,
 * `\boxed{-1}` otherwise.
 *
 * @param action - the assistant output a_t
 * @param nextState - s_{t+1}
 * @returns a system and a user message, ready for a chat template
 */
export function buildHintJudgePrompt(action: string, nextState: ChatMessage): ChatMessage[] {
  return [
    { role: 'system', content: HINT_SYSTEM },
    judgeUserMessage(action, nextState, 'Give your decision and, only if it is \\boxed{1}, the hint in the required format.'),
  ];
}
