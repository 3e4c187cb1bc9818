/** One task a simulated user brings to the policy: a GSM8K question, a story opening, ... */
export interface Problem {
  /** Stable within its source, e.g. `gsm8k/test#0`; runs refer to problems by it. */
  id: string;
  question: string;
  /** GSM8K-style worked solution ending in `#### <number>`; empty where a task has no answer. */
  answer: string;
  /**
   * A student's attempt, for the teacher scenario: written once by the policy at the start of
   * a run and logged as a side turn, so the run file holds what the teacher graded.
   */
  studentWork?: string;
}

/** Limits on what a person may load, so that a wrong file fails fast instead of filling memory. */
export const PROBLEM_LIMITS = {
  fileBytes: 16 * 1024 * 1024,
  problems: 20_000,
  fieldChars: 20_000,
} as const;

/** A problem file that cannot be used; names the line (JSONL) or item (JSON array) and field. */
export class ProblemFileError extends Error {
  override name = 'ProblemFileError';
  constructor(
    message: string,
    readonly where: { line?: number; item?: number; field?: string } = {},
  ) {
    super(message);
  }
}
