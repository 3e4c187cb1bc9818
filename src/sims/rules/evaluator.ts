import type { ChatMessage } from '../../rl/messages';
import { EVALUATOR_SCORES, readEvaluatorPrompt } from '../evaluator-prompt';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { joinList, presentIssues, type RulesProfile } from './profile';
import { RulesInputError } from './reading';

/** A scenario's own way to rate a first answer: a score on EVALUATOR_SCORES' scale and why. */
export type RulesRating = (answer: string, question: string) => { score: number; reason: string };

/**
 * The personalization evaluator by rules: each of the scenario's issues found in the first answer
 * costs one step of the 0/0.25/0.5/0.75/1 scale, the same issues the rule-based user complains of.
 * A scenario that reads its answers more closely gives its own `rating` instead (the storyteller:
 * rateStory in story-score.ts).
 */
export class RulesEvaluator implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label: string;

  constructor(
    private readonly profile: RulesProfile,
    private readonly rating?: RulesRating,
  ) {
    this.label = `rules: evaluator (${profile.name})`;
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const parts = readEvaluatorPrompt(messages);
    if (!parts) {
      throw new RulesInputError('The rule-based evaluator reads prompts made by buildEvaluatorPrompt(); build its messages with it.');
    }
    if (this.rating) {
      const { score, reason } = this.rating(parts.answer, parts.question);
      return `${reason}\n\n\\boxed{${score}}`;
    }
    const issues = presentIssues(this.profile, parts.answer, parts.question);
    const steps = EVALUATOR_SCORES.length - 1;
    const score = EVALUATOR_SCORES[Math.max(0, steps - issues.length)];
    const reason =
      issues.length === 0
        ? "The answer matches the user's preferences."
        : `The answer goes against the user's preferences: ${joinList(issues.map((i) => i.label))}.`;
    return `${reason}\n\n\\boxed{${score}}`;
  }
}
