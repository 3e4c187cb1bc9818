/**
 * The reference evaluation's order of the GSM8K test split. Gen-Verse/OpenClaw-RL scores the
 * personalization of the student and teacher runs on the first 36 problems of its own shuffled
 * copy of the test split (openclaw-test/GSM8K.json, commit 0d034dd), not on the dataset's first
 * 36: the two sets share no problem. data/gsm8k/openclaw-order.json lists, in the reference's
 * order, the row of each of its problems in the test split (all 1,319 matched by exact question
 * text; see data/gsm8k/SOURCE.md). The rows are facts about that file, so they are data here.
 */
import order from '../../../data/gsm8k/openclaw-order.json';
import { ProblemFileError, type Problem } from './problem';

/** Rows of the GSM8K test split (openai/gsm8k, main). */
export const GSM8K_TEST_ROWS = 1319;

/** Where the order comes from, for records and messages. */
export const REFERENCE_ORDER_SOURCE = 'Gen-Verse/OpenClaw-RL openclaw-test/GSM8K.json (0d034dd)';

/** Which order GSM8K problems are taken in: the reference evaluation's, or the dataset's own. */
export const PROBLEM_ORDERS = ['reference', 'dataset'] as const;
export type ProblemOrder = (typeof PROBLEM_ORDERS)[number];

/** The reference's first problem, to recognise the test split in dataset order. */
const FIRST_QUESTION = 'Carol and Jennifer are sisters';

function checkedOrder(rows: unknown): readonly number[] {
  const seen = new Set<number>();
  if (Array.isArray(rows)) for (const r of rows) if (Number.isInteger(r) && r >= 0 && r < GSM8K_TEST_ROWS) seen.add(r);
  if (!Array.isArray(rows) || rows.length !== GSM8K_TEST_ROWS || seen.size !== GSM8K_TEST_ROWS) {
    // A damaged copy of the data file, not anything a user did.
    throw new Error(`data/gsm8k/openclaw-order.json must list each of the ${GSM8K_TEST_ROWS} test rows once; restore it from the repository`);
  }
  return Object.freeze([...(rows as number[])]);
}

/** Row indices into the GSM8K test split, in the reference evaluation's order. */
export const REFERENCE_ORDER: readonly number[] = checkedOrder(order.order);

/** The test-split rows of the reference's first `count` problems. */
export function referenceRows(count: number): number[] {
  return REFERENCE_ORDER.slice(0, count);
}

/**
 * The problems of a GSM8K test-split file (all 1,319, in dataset order) put in the reference's
 * order; each keeps its id, which names its row in the file.
 *
 * @throws ProblemFileError when the problems are not the test split in dataset order, saying
 *   to choose dataset order instead
 */
export function inReferenceOrder(problems: readonly Problem[], name: string): Problem[] {
  const reordered = problems.length === GSM8K_TEST_ROWS ? REFERENCE_ORDER.map((row) => problems[row]) : null;
  if (!reordered || !reordered[0].question.startsWith(FIRST_QUESTION)) {
    throw new ProblemFileError(
      `${name} is not the GSM8K test split in dataset order (${problems.length} problems` +
        `${reordered ? `, row 677 is not "${FIRST_QUESTION}..."` : `, not ${GSM8K_TEST_ROWS}`}), so the reference's ` +
        'evaluation order cannot be applied to it; load the test split as published (openai/gsm8k test.jsonl) ' +
        'or set problems.order to "dataset" to keep the file\'s order.',
    );
  }
  return reordered;
}
