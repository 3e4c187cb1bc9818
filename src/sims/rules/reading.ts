import type { ChatMessage } from '../../rl/messages';
import { AI_REPLY_PREFIX } from '../scenarios/simulator-view';

/** Messages a rule-based generator cannot read; says how to build the right ones. */
export class RulesInputError extends Error {
  override name = 'RulesInputError';
}

export interface SimulatorView {
  /** The user's first message: the task as they posed it. */
  task: string;
  /** The policy's latest answer. */
  answer: string;
  /** How many answers the policy has given so far. */
  turn: number;
  /** The simulator's own message the latest answer replies to. */
  asked: string;
}

/** Reads a chat built by simulatorMessages(): the simulator's lines are `assistant`, the AI's `user`. */
export function readSimulatorView(messages: ChatMessage[]): SimulatorView {
  const answers = messages.filter((m) => m.role === 'user' && m.content.startsWith(AI_REPLY_PREFIX));
  const last = messages.at(-1);
  if (last === undefined || last !== answers.at(-1)) {
    throw new RulesInputError(
      'The rule-based user needs the AI\'s latest answer as the last message, prefixed "The AI assistant replied:"; ' +
        'build its messages with simulatorMessages(scenario, transcript).',
    );
  }
  return {
    task: messages.find((m) => m.role === 'assistant')?.content ?? '',
    answer: last.content.slice(AI_REPLY_PREFIX.length),
    turn: answers.length,
    asked: messages.findLast((m) => m.role === 'assistant')?.content ?? '',
  };
}

/**
 * The next state (the user's reply) inside a judge prompt. Judge prompts put it under a label such
 * as "## Next state (turn t+1, role: user)" or "Next state: ..." and close with an instruction to
 * the judge ("Now assign \\boxed{1}, ..."); the last label counts and the closing instruction is
 * dropped. A prompt without a label is taken as the reply itself.
 */
export function readNextState(messages: ChatMessage[]): string {
  const prompt = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const tagged = /<next_state>([\s\S]*)<\/next_state>/i.exec(prompt);
  if (tagged) return tagged[1].trim();
  const lines = prompt.split('\n');
  const labelAt = lines.findLastIndex((line) => /^[\s#>*_-]*next[ _-]?state\b/i.test(line));
  if (labelAt < 0) return prompt.trim();
  // "Next state: thanks!" carries the reply on the label line; brackets may hold "role: user".
  const inline = /next[ _-]?state\b[^:]*?:\s*(\S.*)$/i.exec(lines[labelAt].replace(/\[[^\]]*\]|\([^)]*\)/g, ''));
  const body = [inline?.[1] ?? '', ...lines.slice(labelAt + 1)].join('\n');
  const nextHeading = body.search(/\n#{1,6}[ \t]/);
  const untilHeading = nextHeading >= 0 ? body.slice(0, nextHeading) : body;
  const trailer = untilHeading.lastIndexOf('\n\n');
  const closing = trailer >= 0 && isJudgeInstruction(untilHeading.slice(trailer + 2));
  return (closing ? untilHeading.slice(0, trailer) : untilHeading).trim();
}

/**
 * The role a judge prompt gives its next state ("## Next state (turn t+1, role: tool, ...)" or
 * "Next state [role: user]"), or null when its label names none.
 */
export function readNextStateRole(messages: ChatMessage[]): string | null {
  const prompt = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const label = prompt.split('\n').findLast((line) => /^[\s#>*_-]*next[ _-]?state\b/i.test(line));
  return label ? (/\brole:\s*([a-z]+)/i.exec(label)?.[1].toLowerCase() ?? null) : null;
}

/** A paragraph addressed to the judge rather than written by the user. */
function isJudgeInstruction(paragraph: string): boolean {
  return paragraph.includes('\\boxed') || /^\s*(?:Now|Classify|Give|Decide|Output|Assign|Rate)\b/.test(paragraph);
}
