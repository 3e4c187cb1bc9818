/**
 * Short names for runs where a whole label does not fit: a chart legend that overlays several
 * runs (on a phone, "storyteller · Combined · storyteller-demo · baseline · answered" wraps over
 * three lines), and a run list where two runs share a label.
 */

/** What a legend entry may be: shorter than this wraps on a 390 px phone. */
export const LEGEND_MAX = 39;
/** A run's tag leaves room for " · " and the longest series name a chart adds ("tool success"). */
const TAG_MAX = 24;
const SEP = ' · ';

/** The start of a run's id: enough to tell a handful of runs apart, short enough to read. */
export const shortRunId = (id: string): string => id.slice(0, 6);

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * The tags that tell overlaid runs apart: the parts of their labels (" · "-separated, as Setup
 * writes them) that not every run shares, so "walk · OPD · seed 1" beside "walk · Binary RL ·
 * seed 1" is "OPD"; runs left with the same tag, or none, add their short id. A single run gets
 * none: the chart's heading names it.
 */
export function runTags(runs: readonly { id: string; label: string }[]): (string | null)[] {
  if (runs.length < 2) return runs.map(() => null);
  const parts = runs.map((r) => r.label.split(SEP));
  const shared = new Set(parts[0].filter((p) => parts.every((q) => q.includes(p))));
  const tags = parts.map((ps) => clip(ps.filter((p) => !shared.has(p)).join(SEP), TAG_MAX));
  const uses = new Map<string, number>();
  for (const t of tags) uses.set(t, (uses.get(t) ?? 0) + 1);
  return tags.map((t, i) => {
    if (t && uses.get(t) === 1) return t;
    const id = `#${shortRunId(runs[i].id)}`;
    return t ? `${clip(t, TAG_MAX - id.length - 1)} ${id}` : id;
  });
}

/** A legend entry: the series' name alone for a single run (tag null), else which run's it is. */
export function seriesLabel(tag: string | null, series?: string): string {
  return [tag, series].filter(Boolean).join(SEP);
}
