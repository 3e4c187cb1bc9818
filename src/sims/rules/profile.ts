/**
 * One thing a simulated user dislikes, described from both sides: how to see it in the policy's
 * answer, how the user complains about it, how the judge recognises that complaint, and what the
 * hint tells the policy to do instead. Keeping the four together keeps user and judge consistent.
 */
export interface Issue {
  id: string;
  /** Whether the answer shows the problem; `task` is the user's first message. */
  present(answer: string, task: string): boolean;
  /** The simulated user's words for it, e.g. "there's bold text". */
  complaint: string;
  /** Recognises the complaint, or a person's similar wording, in a user message. */
  heard: RegExp;
  /** An instruction clause for the hint, e.g. "do not use bold text". */
  fix: string;
  /** A noun phrase for the evaluator's reasoning, e.g. "bold text". */
  label: string;
}

/** Everything the rule-based user, judge and evaluator know about one scenario. */
export interface RulesProfile {
  name: string;
  doneMarker: string;
  issues: readonly Issue[];
  /** Start a complaint message, before the list of complaints. */
  openers: readonly string[];
  /** End a complaint message with the request to redo; each must read as a redo request. */
  closers: readonly string[];
  /** Say the answer is good; the done marker is appended. */
  approvals: readonly string[];
  /**
   * How readily the user approves: entry i is the chance they accept an answer that still has i
   * of their issues (past the end: never). Absent, only an answer with none is accepted.
   */
  acceptance?: readonly number[];
  /** The judge's hint for the issues heard in a reply; `seed` may vary its wording. */
  hint: (issues: readonly Issue[], seed: number) => string;
  /**
   * In a homework workspace: how the user, once happy, asks in a message of its own for the
   * answer to be appended to the file (`{file}` is its path), asks again when the AI does not say
   * it saved it, and thanks the AI (the done marker is appended) once it does.
   */
  saving?: { requests: readonly string[]; retries: readonly string[]; thanks: readonly string[] };
}

/** A hint in one fixed wording: `lead`, the issues' fixes as one sentence, then `tail`. */
export function listedHint(lead: string, tail = ''): RulesProfile['hint'] {
  return (issues) => [`${lead} ${joinList(issues.map((i) => i.fix))}.`, tail].filter(Boolean).join(' ');
}

/** The chance the user of `profile` accepts an answer with `issues` of their issues left. */
export function acceptanceOf(profile: RulesProfile, issues: number): number {
  return profile.acceptance ? (profile.acceptance[issues] ?? 0) : issues === 0 ? 1 : 0;
}

export function presentIssues(profile: RulesProfile, answer: string, task: string): Issue[] {
  return profile.issues.filter((issue) => issue.present(answer, task));
}

export function heardIssues(profile: RulesProfile, message: string): Issue[] {
  return profile.issues.filter((issue) => issue.heard.test(message));
}

/** "a", "a and b", "a, b and c". */
export function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
