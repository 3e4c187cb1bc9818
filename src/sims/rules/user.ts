import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { hashParts, pick } from '../seeded';
import { acceptanceOf, joinList, presentIssues, type RulesProfile } from './profile';
import { readSimulatorView, RulesInputError } from './reading';

/** The file a homework's first message names ("the file homework/3.txt in your workspace"). */
const FILE = /(?:[\w-]+\/)*[\w-]+\.txt\b/;
/** The AI's words for having written the file. */
const SAVED = /\b(?:appended|saved|added (?:it|them|the)|wrote|written|updated|stored)\b/i;
/** The user's own request to append (its wordings in RulesProfile.saving all say "append" or "add"). */
const ASKED_TO_SAVE = /\b(?:append|add) (?:it|them|the (?:answer|comments)) to the end of\b/i;

/**
 * A simulated user that follows its scenario's rules: it finds what it dislikes in the latest
 * answer and asks for a rewrite naming each problem, or approves and writes the done marker.
 * Wording varies with the seed. The decision depends on the answer alone, except for a user with
 * graded acceptance (RulesProfile.acceptance), who accepts an answer with a few issues left by a
 * draw from the seed and the turn, the way a person lets a nearly right answer pass.
 *
 * In a homework workspace (`workspace`) approving is not the end, as for the reference's users:
 * the user asks, in a message of its own, for the answer to be appended to the file the first
 * message named, and writes the done marker only once the AI says it saved it (asking again
 * while it does not). Like an LLM user, it reads only the AI's replies, never the file.
 */
export class RulesUser implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label: string;

  constructor(
    private readonly profile: RulesProfile,
    private readonly options: { workspace?: boolean } = {},
  ) {
    this.label = `rules: ${profile.name} simulator`;
    if (options.workspace && !profile.saving) throw new RulesInputError(`The ${profile.name} rules have no wording for saving to a workspace file.`);
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const { task, answer, turn, asked } = readSimulatorView(messages);
    const seed = opts.seed ?? 0;
    const { profile } = this;
    const saving = this.options.workspace ? profile.saving! : null;
    const file = FILE.exec(task)?.[0] ?? 'the homework file';
    if (saving && ASKED_TO_SAVE.test(asked)) {
      if (SAVED.test(answer)) return `${pick(saving.thanks, seed, turn, 'thanks')} ${profile.doneMarker}`;
      return pick(saving.retries, seed, turn, 'retry').replaceAll('{file}', file);
    }
    const issues = presentIssues(profile, answer, task);
    const draw = hashParts(seed, turn, 'accept') / 2 ** 32;
    if (draw < acceptanceOf(profile, issues.length)) {
      if (saving) return pick(saving.requests, seed, turn, 'save').replaceAll('{file}', file);
      return `${pick(profile.approvals, seed, turn, 'approve')} ${profile.doneMarker}`;
    }
    const complaint = `${pick(profile.openers, seed, turn, 'open')} ${joinList(issues.map((i) => i.complaint))}.`;
    return `${complaint} ${pick(profile.closers, seed, turn, 'close')}`;
  }
}

/**
 * The rules user of a homework whose phases have different users (the student's, then the
 * teacher's): it plays whoever the simulator's system prompt, the phase's persona, describes.
 */
export class PhasedRulesUser implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label: string;

  constructor(private readonly phases: readonly { persona: string; user: RulesUser }[]) {
    this.label = phases.map((p) => p.user.label).join(', then ');
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    const persona = messages[0]?.role === 'system' ? messages[0].content : null;
    const phase = this.phases.find((p) => p.persona === persona);
    if (!phase) {
      throw new RulesInputError(
        "The homework's rule-based user plays one of its phases; start its messages with that phase's persona (simulatorMessages(phase, transcript)).",
      );
    }
    return phase.user.generate(messages, opts);
  }
}
