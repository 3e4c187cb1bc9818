/**
 * Not an assertion of looks: renders every view with the recorded run at a desktop and a narrow
 * width (and in dark mode) and saves screenshots to e2e/artifacts/ (gitignored) for a person to
 * look at. It checks only that nothing overflows the page sideways.
 */
import { describe, expect, it } from 'vitest';
import { tick } from 'svelte';
import { cdp, page } from 'vitest/browser';
import Gallery from './Gallery.test-harness.svelte';
import { recordedRun, render } from '../../../test/support/views/testing';
import { overflowing } from '../../../test/support/views/testing-dom';

const other = () =>
  recordedRun().map((r) =>
    r.kind === 'train_step'
      ? { ...r, stats: { ...r.stats, loss: (r.stats.loss ?? 0) * 0.6, entropy: (r.stats.entropy ?? 0) + 0.2 } }
      : r.kind === 'evaluation'
        ? { ...r, scores: { score: (r.scores.score ?? 0) - 0.2 } }
        : r,
  );

async function shoot(name: string, width: number, dark = false): Promise<void> {
  await page.viewport(width, 1100);
  if (dark) await cdp().send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
  try {
    using view = render(Gallery, { records: recordedRun(), other: other() });
    await tick();
    await new Promise((r) => setTimeout(r, 200));
    expect(overflowing(width)).toEqual([]);
    expect(document.documentElement.scrollWidth).toBeLessThanOrEqual(width);
    // Focus a clipped token so the details panel is filled.
    view.target.querySelector<HTMLButtonElement>('button.tok[data-clip="low"]')?.focus();
    await tick();
    // One screenshot per view: a whole-page one would not fit the test frame.
    for (const [part, selector] of [
      ['tokens', '.token-view'],
      ['feed', '.feed'],
      ['before-after', '.before-after'],
      ['charts', '.metrics'],
      ['how', '.how'],
    ]) {
      const el = view.target.querySelector<HTMLElement>(selector)!;
      // Taller than the frame: grow the frame (a cut-off screenshot is useless).
      const h = el.getBoundingClientRect().height;
      await page.viewport(width, Math.max(1100, Math.ceil(h) + 40));
      await new Promise((r) => setTimeout(r, 100));
      el.scrollIntoView();
      await page.screenshot({ path: `../../../e2e/artifacts/views-${name}-${part}.png`, element: el });
    }
    // The OPD picture, pointing at a token the hint pushed up.
    await page.viewport(width, 1100);
    view.target.querySelector<HTMLInputElement>('.token-view input[value="opd"]')!.click();
    await tick();
    const tv = view.target.querySelector<HTMLElement>('.token-view')!;
    const best = [...tv.querySelectorAll<HTMLButtonElement>('button.tok')].sort((a, b) => Number(b.dataset.advantage) - Number(a.dataset.advantage))[0];
    best.focus();
    await tick();
    tv.scrollIntoView();
    await page.screenshot({ path: `../../../e2e/artifacts/views-${name}-tokens-opd.png`, element: tv });
  } finally {
    if (dark) await cdp().send('Emulation.setEmulatedMedia', { features: [] });
  }
}

describe('views screenshots', () => {
  it('desktop 1280px', async () => {
    await shoot('1280', 1280);
  });
  it('narrow 400px', async () => {
    await shoot('400', 400);
  });
  it('dark 1280px', async () => {
    await shoot('dark-1280', 1280, true);
  });
});
