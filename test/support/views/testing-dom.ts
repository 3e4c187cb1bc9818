/** DOM queries the view tests share: charts by title, uPlot's drawn series, overflow. */

/** The chart figure whose heading is `title`. */
export function chart(target: HTMLElement, title: string): HTMLElement {
  const c = [...target.querySelectorAll<HTMLElement>('figure.chart')].find((f) => f.querySelector('h4')?.textContent === title);
  if (!c) throw new Error(`no chart ${title}`);
  return c;
}

/** uPlot's legend rows minus the x row: the drawn series. */
export function seriesLabels(fig: HTMLElement): string[] {
  return [...fig.querySelectorAll('.u-legend .u-series')].slice(1).map((s) => s.querySelector('.u-label')?.textContent ?? '');
}

/** The chart's own visually-hidden table of latest values: series -> [x, value]. */
export function latest(fig: HTMLElement): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const tr of fig.querySelectorAll('.nsv-visually-hidden tbody tr')) {
    const [x, v] = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
    out[tr.querySelector('th')!.textContent!] = [x, v];
  }
  return out;
}

/**
 * Elements that stick out past the right edge of a page `width` wide, except inside `allowed`
 * (selectors of boxes that scroll or are hidden on purpose).
 */
export function overflowing(width: number, allowed = '.nsv-visually-hidden'): string[] {
  return [...document.body.querySelectorAll('*')]
    .filter((el) => !el.closest(allowed) && el.getBoundingClientRect().right > width + 0.5)
    .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} right=${Math.round(el.getBoundingClientRect().right)}`)
    .slice(0, 12);
}
