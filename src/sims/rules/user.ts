import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { pick } from '../seeded';
import { joinList, presentIssues, type RulesProfile } from './profile';
import { readSimulatorView } from './reading';

/**
 * A simulated user that follows its scenario's rules: it finds what it dislikes in the latest
 * answer and asks for a rewrite naming each problem, or approves and writes the done marker.
 * Wording varies with the seed; the decision depends only on the answer.
 */
export class RulesUser implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label: string;

  constructor(private readonly profile: RulesProfile) {
    this.label = `rules: ${profile.name} simulator`;
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const { task, answer, turn } = readSimulatorView(messages);
    const seed = opts.seed ?? 0;
    const { profile } = this;
    const issues = presentIssues(profile, answer, task);
    if (issues.length === 0) return `${pick(profile.approvals, seed, turn, 'approve')} ${profile.doneMarker}`;
    const complaint = `${pick(profile.openers, seed, turn, 'open')} ${joinList(issues.map((i) => i.complaint))}.`;
    return `${complaint} ${pick(profile.closers, seed, turn, 'close')}`;
  }
}
