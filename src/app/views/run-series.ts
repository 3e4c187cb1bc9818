/**
 * What the charts that overlay several runs share: one colour per run, the dash patterns of
 * secondary lines, and the alignment of each run's points on a common x axis (uPlot takes one
 * x array and a y array per series, null where a series has no point).
 */

const RUN_COLORS = ['var(--run-1)', 'var(--run-2)', 'var(--run-3)', 'var(--run-4)', 'var(--run-5)', 'var(--run-6)'];

/** The colour of the i-th run on a chart (the palette repeats after six). */
export const runColor = (i: number): string => RUN_COLORS[i % RUN_COLORS.length];

/** Baselines and second lines of a run. */
export const DASH = [6, 4];
/** Third lines of a run. */
export const DOT = [2, 3];

/** Sorted union of x values. */
export function unionX(lists: readonly (readonly number[])[]): number[] {
  return [...new Set(lists.flat())].sort((a, b) => a - b);
}

/** Values at the shared xs (null where the run has none); the last point wins on duplicates. */
export function valuesAt<T>(xs: readonly number[], points: readonly T[], xOf: (p: T) => number, yOf: (p: T) => number | null): (number | null)[] {
  const m = new Map<number, number | null>();
  for (const p of points) m.set(xOf(p), yOf(p));
  return xs.map((v) => m.get(v) ?? null);
}
