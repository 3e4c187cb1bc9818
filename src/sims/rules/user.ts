import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { hashParts, pick } from '../seeded';
import { acceptanceOf, joinList, presentIssues, type RulesProfile } from './profile';
import { readSimulatorView } from './reading';

/**
 * A simulated user that follows its scenario's rules: it finds what it dislikes in the latest
 * answer and asks for a rewrite naming each problem, or approves and writes the done marker.
 * Wording varies with the seed. The decision depends on the answer alone, except for a user with
 * graded acceptance (RulesProfile.acceptance), who accepts an answer with a few issues left by a
 * draw from the seed and the turn, the way a person lets a nearly right answer pass.
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
    const draw = hashParts(seed, turn, 'accept') / 2 ** 32;
    if (draw < acceptanceOf(profile, issues.length)) return `${pick(profile.approvals, seed, turn, 'approve')} ${profile.doneMarker}`;
    const complaint = `${pick(profile.openers, seed, turn, 'open')} ${joinList(issues.map((i) => i.complaint))}.`;
    return `${complaint} ${pick(profile.closers, seed, turn, 'close')}`;
  }
}
