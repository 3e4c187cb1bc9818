/**
 * Every "How it works" panel where the lab shows it (beside the Setup form, beside each view of
 * a run, under them on a narrow window), at desktop widths from 1024 to 1920 px and on phones:
 * no panel and no formula is wider than its column. Saves a screenshot of each panel to
 * e2e/artifacts/ (gitignored) for a person to look at.
 */
import '../app.css';
import { flushSync, tick } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import { page } from 'vitest/browser';
import type { LabController } from '../lab/controller.svelte';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { comparisonSetups } from '../lab/comparison';
import { defaultSetup, toRunConfig, withScenario } from '../lab/setup';
import { recordedRun, render } from '../../../test/support/views/testing';
import RunView from './RunView.svelte';
import Setup from './Setup.svelte';

vi.setConfig({ testTimeout: 120_000 });

const DESKTOP = [1024, 1280, 1366, 1440, 1920];
const PHONE = [360, 390];

const controller = labControllers('how-test');

/** A stored run of the recorded records, open in the lab, as a talk run when `talk`. */
async function openRun(lab: LabController, talk: boolean): Promise<void> {
  const setup = talk ? withScenario(defaultSetup({ webgpu: false }), 'talk') : defaultSetup({ webgpu: false });
  const id = await lab.store.createRun(toRunConfig(setup), talk ? 'talk' : 'recorded', 'finished');
  await lab.store.appendMany(id, recordedRun());
  await lab.refreshRuns();
  await lab.open(id);
}

/**
 * Every panel, formula or formula piece whose content is wider than its box (a formula that
 * scrolls sideways is cut off at the panel's edge), named with its widths.
 */
function overflows(root: HTMLElement): string[] {
  return [...root.querySelectorAll<Element>('details.how, details.how .formula, details.how math')]
    .filter((el) => el.scrollWidth > el.clientWidth)
    .map(
      (el) =>
        `${el.closest<HTMLElement>('details.how')!.dataset.topic} ${el.tagName.toLowerCase()}.${[...el.classList].join('.')}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`,
    );
}

/** Lays the page out at `width` px, after fonts and the formulas' resize observers have run. */
async function at(width: number): Promise<void> {
  await page.viewport(width, 900);
  await document.fonts.ready;
  // Two frames: one for layout and the observers, one for what they changed.
  for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(r));
  await tick();
}

async function check(root: HTMLElement, name: string, topics: string[]): Promise<void> {
  const panels = [...root.querySelectorAll<HTMLElement>('details.how')];
  expect(panels.map((p) => p.dataset.topic).sort()).toEqual([...topics].sort());
  for (const width of [...DESKTOP, ...PHONE]) {
    await at(width);
    expect(overflows(root), `${name} at ${width} px`).toEqual([]);
    for (const p of panels) {
      // Laid out, not collapsed to nothing.
      expect(p.clientWidth, `${p.dataset.topic} at ${width} px`).toBeGreaterThan(150);
      // Each formula piece is inside its panel's box.
      const box = p.getBoundingClientRect();
      for (const m of p.querySelectorAll('math')) {
        const r = m.getBoundingClientRect();
        expect(r.left, `${p.dataset.topic} at ${width} px`).toBeGreaterThanOrEqual(box.left - 0.5);
        expect(r.right, `${p.dataset.topic} at ${width} px`).toBeLessThanOrEqual(box.right + 0.5);
      }
    }
    if (width === 1366 || width === 390) {
      for (const p of panels) {
        p.scrollIntoView();
        await page.screenshot({ path: `../../../e2e/artifacts/how-${name}-${p.dataset.topic}-${width}.png`, element: p });
      }
    }
  }
}

/** The lab's page frame (#app: its width and padding) around a component. */
function inApp<T extends { target: HTMLDivElement }>(view: T): T {
  view.target.id = 'app';
  return view;
}

describe('"How it works" panels fit their column', () => {
  it('beside the Setup form', async () => {
    const lab = await controller();
    using view = inApp(render(Setup, { lab }));
    flushSync();
    await check(view.target, 'setup', ['setup']);
  });

  it('beside the Setup form of the tool-call track, which speaks of its own rewards', async () => {
    const lab = await controller();
    lab.setup.track = 'toolcall';
    using view = inApp(render(Setup, { lab }));
    flushSync();
    await check(view.target, 'setup-toolcall', ['setup']);
    const panel = view.target.querySelector<HTMLElement>('details.how')!.textContent!;
    expect(panel).toContain('calculator tool');
    expect(panel).toContain('Outcome only');
    // The personal agent's methods are not this track's choices.
    expect(panel).not.toContain('Binary RL');
    expect(panel).not.toContain('simulated');
  });

  it('beside the views of a stored run', async () => {
    const lab = await controller();
    await openRun(lab, false);
    using view = inApp(render(RunView, { lab }));
    flushSync();
    await check(view.target, 'run', ['charts', 'feed', 'tokens', 'before-after']);
  });

  it('beside the arms of a comparison', async () => {
    const lab = await controller();
    const ids: string[] = [];
    for (const setup of comparisonSetups(defaultSetup({ webgpu: false })).slice(0, 2)) {
      const id = await lab.store.createRun(toRunConfig(setup), setup.label, 'finished');
      await lab.store.appendMany(id, recordedRun());
      ids.push(id);
    }
    await lab.refreshRuns();
    await lab.open(ids[1]);
    await lab.toggleCompare(ids[0], true);
    using view = inApp(render(RunView, { lab }));
    flushSync();
    await check(view.target, 'comparison', ['shuffled-control', 'charts', 'feed', 'tokens', 'before-after']);
  });

  it('beside the chat of a talk run', async () => {
    const lab = await controller();
    await openRun(lab, true);
    using view = inApp(render(RunView, { lab }));
    flushSync();
    await check(view.target, 'talk', ['talk', 'charts', 'feed', 'tokens']);
  });
});
