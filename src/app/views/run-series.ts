/**
 * What the charts that overlay several runs share: one colour per run, the dash patterns of
 * secondary lines, and the alignment of each run's points on a common x axis (uPlot takes one
 * x array and a y array per series, null where a series has no point).
 */
import { LEGEND_MAX, seriesLabel } from './run-names';

const RUN_COLORS = ['var(--run-1)', 'var(--run-2)', 'var(--run-3)', 'var(--run-4)', 'var(--run-5)', 'var(--run-6)'];

/** The colour of the i-th run on a chart (the palette repeats after six). */
export const runColor = (i: number): string => RUN_COLORS[i % RUN_COLORS.length];

/** Baselines and second lines of a run. */
export const DASH = [6, 4];
/** Third lines of a run. */
export const DOT = [2, 3];

/** Widths of a run's first, second and third lines: the first widest, so a line on top of it leaves it visible. */
export const LINE_WIDTHS = [3.5, 2, 1.25];

/**
 * One dashed baseline per distinct starting score: runs whose first evaluation scored the same
 * (the arms of a comparison on one seed start from one untrained policy) share it, in a neutral
 * colour and named for the runs it stands for (by their tags, run-names.ts; by their number where
 * the tags would make the legend too long for a phone); a run with a baseline of its own keeps
 * its colour.
 */
export function sharedBaselines(
  runs: readonly { tag: string | null; color: string; baseline: number | null }[],
): { label: string; color: string; value: number }[] {
  const groups = new Map<number, { tag: string | null; color: string }[]>();
  for (const r of runs) if (r.baseline !== null) groups.set(r.baseline, [...(groups.get(r.baseline) ?? []), r]);
  return [...groups].map(([value, group]) => {
    if (group.length === 1) return { label: seriesLabel(group[0].tag, 'baseline'), color: group[0].color, value };
    const named = `baseline (step 0): ${group.map((g) => g.tag).join(', ')}`;
    return {
      label:
        group.length === runs.length
          ? `baseline of all ${group.length} runs (step 0)`
          : named.length <= LEGEND_MAX
            ? named
            : `baseline of ${group.length} runs (step 0)`,
      color: 'var(--muted)',
      value,
    };
  });
}

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
