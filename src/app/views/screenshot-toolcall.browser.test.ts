/**
 * Not an assertion of looks: renders the tool-call views (AccuracyChart and TrajectoryView on the
 * hand-written logs of test/support/views/testing-toolcall.ts, which have valid calls, failures and several steps)
 * at a desktop and a narrow width and in dark mode, and saves screenshots to e2e/artifacts/
 * (gitignored) for a person to look at. It checks only that nothing overflows the page sideways.
 */
import { describe, expect, it } from 'vitest';
import { tick } from 'svelte';
import { cdp, page } from 'vitest/browser';
import Gallery from './GalleryToolcall.test-harness.svelte';
import { render } from '../../../test/support/views/testing';
import { handOutcomeRun, handToolRun } from '../../../test/support/views/testing-toolcall';
import { overflowing } from '../../../test/support/views/testing-dom';

async function shoot(name: string, width: number, dark = false): Promise<void> {
  await page.viewport(width, 1100);
  if (dark) await cdp().send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
  try {
    using view = render(Gallery, { integrated: handToolRun(), outcome: handOutcomeRun(), group: 'g0' });
    await tick();
    // Rollout r2 has every kind of call: a failing expression, a good and an unreadable block.
    view.target.querySelector<HTMLInputElement>('input[type="radio"][value="g0.r2"]')!.click();
    await tick();
    // Open one step's judge replies.
    const det = view.target.querySelector<HTMLDetailsElement>('[data-step="1"] details');
    if (det) det.open = true;
    await tick();
    await new Promise((r) => setTimeout(r, 200));
    // The reward table may scroll inside its own box (.tablewrap); nothing else may stick out.
    expect(overflowing(width, '.nsv-visually-hidden, .tablewrap')).toEqual([]);
    expect(document.documentElement.scrollWidth).toBeLessThanOrEqual(width);
    const el = view.target.querySelector<HTMLElement>('.page')!;
    const h = Math.max(1100, Math.ceil(el.getBoundingClientRect().height) + 40);
    // Vitest scales the test frame down to fit the runner's window; a window as big as the frame
    // keeps the screenshot at full size, readable.
    await cdp().send('Emulation.setDeviceMetricsOverride', { width: width + 40, height: h + 40, deviceScaleFactor: 1, mobile: false });
    await page.viewport(width, h);
    await new Promise((r) => setTimeout(r, 150));
    el.scrollIntoView();
    await page.screenshot({ path: `../../../e2e/artifacts/${name}.png`, element: el });
  } finally {
    await cdp().send('Emulation.clearDeviceMetricsOverride');
    if (dark) await cdp().send('Emulation.setEmulatedMedia', { features: [] });
  }
}

describe('tool-call views screenshots', () => {
  it('desktop 1280px', async () => {
    await shoot('views-toolcall', 1280);
  });
  it('narrow 400px', async () => {
    await shoot('views-toolcall-400', 400);
  });
  it('dark 1280px', async () => {
    await shoot('views-toolcall-dark', 1280, true);
  });
});
