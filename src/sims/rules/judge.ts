import { quotedRequest } from '../../rl/hints';
import type { ChatMessage } from '../../rl/messages';
import type { JudgeKind } from '../../rl/records';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { hashParts } from '../seeded';
import { heardIssues, type RulesProfile } from './profile';
import { classifyReaction, classifyToolResult } from './reaction';
import { readNextState, readNextStateRole } from './reading';

/** Which judge the rules play: the binary or the hint judge (a record's JudgeKind). */
export type JudgeMode = JudgeKind;

const QUOTE_CHARS = 200;

/**
 * A judge that reads the user's reply (the next state) in the judge prompt and answers in the LLM
 * judge's format: a short reason, then `\boxed{1}`, `\boxed{-1}` or `\boxed{0}` (binary mode), or
 * `\boxed{1}` with a `[HINT_START]...[HINT_END]` hint when the reply asks for a change, else
 * `\boxed{-1}` (hint mode). Without a profile it works for any user: the hint restates the request.
 * The binary classes are the reference judge's (reaction.ts): an unrelated new question is
 * ambiguous, a change request is a correction, and a tool result is judged as one.
 */
export class RulesJudge implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label: string;
  private readonly profiles: readonly RulesProfile[];

  /** `profile`: the scenario's, or a homework's phases' (the hint follows the first whose issues the reply names). */
  constructor(
    private readonly mode: JudgeMode,
    profile: RulesProfile | readonly RulesProfile[] | null = null,
  ) {
    const role = mode === 'binary' ? 'judge' : 'hint judge';
    this.profiles = profile === null ? [] : 'name' in profile ? [profile] : profile;
    this.label = this.profiles.length ? `rules: ${role} (${this.profiles.map((p) => p.name).join(', ')})` : `rules: ${role}`;
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const reply = readNextState(messages);
    const tool = readNextStateRole(messages) === 'tool';
    const reaction = tool ? classifyToolResult(reply) : classifyReaction(reply);
    if (this.mode === 'binary') {
      if (tool) {
        return reaction === 'progress'
          ? 'The tool ran and returned a result without an error, so the call worked.\n\n\\boxed{1}'
          : 'The tool reported an error, so the call failed.\n\n\\boxed{-1}';
      }
      if (reaction === 'progress') return 'The user accepts the answer and moves on, so the step succeeded.\n\n\\boxed{1}';
      if (reaction === 'redo') return 'The user asks for the answer to be redone or changed, so it was not what they wanted.\n\n\\boxed{-1}';
      return 'The reply neither accepts nor rejects the answer (it may be about something else).\n\n\\boxed{0}';
    }
    if (reaction !== 'redo') return 'The reply carries no instruction that would have improved the answer.\n\n\\boxed{-1}';
    if (tool) {
      const hint = `The tool call failed with "${quotable(reply)}". Make the call so that the tool can run it.`;
      return `The tool result says what was wrong with the call.\n\n[HINT_START]${hint}[HINT_END]\n\n\\boxed{1}`;
    }
    // The hint comes before the decision so that nothing quoted can be mistaken for the last \boxed{}.
    // Its wording is seeded by the judged turn too: the vote seed repeats across sessions
    // (judge-turn.ts voteSeed), and one wording for every first turn would be no paraphrase at all.
    return `The user says what was wrong with the answer.\n\n[HINT_START]${this.hint(reply, hashParts(opts.seed ?? 0, ...messages.map((m) => String(m.content))))}[HINT_END]\n\n\\boxed{1}`;
  }

  private hint(reply: string, seed: number): string {
    for (const profile of this.profiles) {
      const issues = heardIssues(profile, reply);
      if (issues.length > 0) return profile.hint(issues, seed);
    }
    return quotedRequest(quotable(reply));
  }
}

/** Text to quote in a hint: one line, bounded, without anything that reads as a judge's markup. */
function quotable(text: string): string {
  return text
    .replace(/\\boxed\{[^}]*\}|\[HINT_(?:START|END)\]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, QUOTE_CHARS);
}
