import { unsignedZero } from './numbers';

/**
 * Majority vote over m judge votes for one turn.
 *
 * Failed votes (null: the judge gave no readable box) are ignored. With no valid vote, or
 * when two values share the highest count, the turn scores 0: a split judge is an
 * ambiguous judge, and 0 gives the turn no binary advantage.
 *
 * @param scores - one entry per vote; null, undefined and non-finite entries are failed votes
 * @returns the winning value (1, 0 or -1 for judge votes), or 0
 */
export function majorityVote(scores: readonly (number | null | undefined)[]): number {
  const counts = new Map<number, number>();
  for (const s of scores) {
    if (typeof s === 'number' && Number.isFinite(s)) counts.set(unsignedZero(s), (counts.get(s) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = 0;
  let tied = false;
  for (const [value, count] of counts) {
    if (count > bestCount) {
      best = value;
      bestCount = count;
      tied = false;
    } else if (count === bestCount) {
      tied = true;
    }
  }
  return bestCount === 0 || tied ? 0 : best;
}
