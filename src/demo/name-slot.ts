/**
 * Can OPD's teacher teach a name? The student never sees the hint, so it can learn the pet's name
 * only where the teacher (the same model with the hint in front) puts the name after the words a
 * story names a pet with. This measures that probability directly, by scoring, where the hint
 * table's copy rates sample whole stories: on every evaluation opening, after "The bunny was
 * called" and two other name sentences, with the hint in the judge's held-out wordings and without.
 */
import type { Policy } from '../gpu/policy';
import { mulberry32 } from '../gpu/random';
import { hintInFront } from '../rl/hints';
import { storyOpenings } from '../sims/problems/story-openings';
import { instructionFor } from '../sims/rules/story-instructions';
import type { ChildWishes } from '../sims/scenarios/other-child';

export interface NameSlot {
  /** Mean probability of the whole name (all its tokens) at the slot, with the hint in front. */
  hinted: number;
  /** The same without the hint: what the student, which never reads it, starts from. */
  unhinted: number;
  /** Mean probability of the name's first token with the hint: a teacher can start a name it cannot finish. */
  hintedFirstToken: number;
  /** Openings × name sentences measured. */
  cases: number;
}

/** The sentence starts a story names its pet with, each followed by the name and a full stop. */
const SLOTS = [(s: string) => ` The ${s} was called `, (s: string) => ` The ${s}'s name was `, (s: string) => ` The ${s} was named `];

export async function nameSlot(policy: Policy, child: ChildWishes, seed = 7): Promise<NameSlot> {
  const rand = mulberry32(seed);
  const items = storyOpenings(child.subject, 'evaluation').flatMap((opening) =>
    SLOTS.map((slot) => {
      const hint = instructionFor({ ...child, bedtime: true }, rand, 'held-out', false);
      return { hint, opening: opening.question, lead: slot(child.subject) };
    }),
  );
  const asked = items.flatMap((x) => [hintInFront(x.hint, x.opening), x.opening].map((prompt) => ({ prompt, lead: x.lead })));
  const scored = await policy.scoreText(asked.map((x) => ({ prompt: x.prompt, completion: `${x.lead}${child.name}.` })));
  const sum = { hinted: 0, unhinted: 0, hintedFirstToken: 0 };
  asked.forEach((x, i) => {
    // The name's tokens: after the lead's, before the full stop's.
    const from = policy.completionIds(x.prompt, x.lead.trimEnd()).length;
    const name = Array.from(scored[i].logprobs).slice(from, -1);
    const p = Math.exp(name.reduce((a, b) => a + b, 0));
    if (i % 2 === 0) {
      sum.hinted += p;
      sum.hintedFirstToken += Math.exp(name[0]);
    } else sum.unhinted += p;
  });
  const n = items.length;
  return { hinted: sum.hinted / n, unhinted: sum.unhinted / n, hintedFirstToken: sum.hintedFirstToken / n, cases: n };
}
