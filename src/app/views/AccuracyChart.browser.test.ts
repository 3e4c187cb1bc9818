import { describe, expect, it } from 'vitest';
import { flushSync, tick } from 'svelte';
import type { EvaluationRecord, RunRecord } from '../../rl/records';
import AccuracyChart from './AccuracyChart.svelte';
import { HOSTILE, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';
import { handOutcomeRun, handToolRun, recordedOutcomeRun, recordedToolRun } from '../../../test/support/views/testing-toolcall';
import { chart, latest, seriesLabels } from '../../../test/support/views/testing-dom';

/** The view's hidden table of every evaluation: header row, then one row per step and the baseline. */
function dataTable(target: HTMLElement): string[][] {
  const t = target.querySelector<HTMLTableElement>('section.accuracy > .nsv-visually-hidden table')!;
  return [...t.querySelectorAll('tr')].map((tr) => [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').replace(/\s+/g, ' ').trim()));
}

const ACC = 'Accuracy by train step';
const ANS = 'Answered and tool success';

describe('AccuracyChart', () => {
  it('overlays the recorded integrated and outcome-only runs with one shared baseline', async () => {
    using view = render(
      AccuracyChart,
      {
        runs: [
          { id: 'a', label: 'integrated', records: recordedToolRun() },
          { id: 'b', label: 'outcome-only', records: recordedOutcomeRun() },
        ],
      },
      { width: '1000px' },
    );
    await tick();
    const acc = chart(view.target, ACC);
    expect(acc.querySelector('canvas')).not.toBeNull();
    // Both runs start from the same policy (accuracy 0): one baseline line.
    expect(seriesLabels(acc)).toEqual(['integrated', 'outcome-only', 'baseline (step 0)']);
    expect(latest(acc)).toEqual({ integrated: ['2', '0.000'], 'outcome-only': ['2', '0.000'], 'baseline (step 0)': ['2', '0.000'] });
    expect(acc.querySelector('[role="img"]')!.getAttribute('aria-label')).toMatch(/^Share of held-out problems .*integrated: 0\.000 at train step 2/);
    // No tool call was made in these runs: answered only.
    expect(seriesLabels(chart(view.target, ANS))).toEqual(['integrated · answered', 'outcome-only · answered']);
    expect([...view.target.querySelectorAll('.runs li')].map((li) => li.textContent!.replace(/\s+/g, ' ').trim())).toEqual([
      'integrated integrated reward: r_t = o + mean(PRM votes)',
      'outcome-only outcome-only reward: r_t = o',
    ]);
    expect(dataTable(view.target)).toEqual([
      ['train step', 'integrated', 'outcome-only'],
      ['0', '0.000 (3 problems, answered 1.000)', '0.000 (3 problems, answered 1.000)'],
      ['1', '0.000 (3 problems, answered 1.000)', '0.000 (3 problems, answered 1.000)'],
      ['2', '0.000 (3 problems, answered 1.000)', '0.000 (3 problems, answered 1.000)'],
      ['baseline', '0.000', '0.000'],
    ]);
  });

  it('draws a baseline per run when the runs start apart, and tool success where calls were made', async () => {
    const lower = handOutcomeRun().map((r) => (r.kind === 'evaluation' && r.step === 0 ? { ...r, scores: { ...r.scores, accuracy: 0.1 } } : r));
    using view = render(AccuracyChart, {
      runs: [
        { id: 'a', label: 'integrated', records: handToolRun() },
        { id: 'b', label: 'outcome', records: lower },
      ],
    });
    await tick();
    const acc = chart(view.target, ACC);
    expect(seriesLabels(acc)).toEqual(['integrated', 'outcome', 'integrated · baseline', 'outcome · baseline']);
    // The integrated run has no evaluation at step 2: its latest point is step 1.
    expect(latest(acc)).toEqual({
      integrated: ['1', '0.500'],
      outcome: ['2', '0.300'],
      'integrated · baseline': ['2', '0.250'],
      'outcome · baseline': ['2', '0.100'],
    });
    const ans = chart(view.target, ANS);
    expect(seriesLabels(ans)).toEqual(['integrated · answered', 'integrated · tool success', 'outcome · answered', 'outcome · tool success']);
    expect(latest(ans)['integrated · tool success']).toEqual(['1', '0.800']);
    expect(latest(ans)['outcome · tool success']).toEqual(['2', '0.500']);
    expect(dataTable(view.target)).toEqual([
      ['train step', 'integrated', 'outcome'],
      ['0', '0.250 (4 problems, answered 0.500)', '0.100 (4 problems, answered 0.500)'],
      ['1', '0.500 (4 problems, answered 0.750, tool success 0.800)', '0.250 (4 problems, answered 0.500, tool success 1.000)'],
      ['2', '–', '0.300 (10 problems, answered 0.600, tool success 0.500)'],
      ['baseline', '0.250', '0.100'],
    ]);
    // Runs differ by colour.
    const markers = acc.querySelectorAll('.u-legend .u-series .u-marker');
    expect(getComputedStyle(markers[1]).borderColor).not.toBe(getComputedStyle(markers[2]).borderColor);
  });

  it('updates in place when an evaluation is appended', async () => {
    const records = handToolRun();
    const props = reactive({ runs: [{ id: 'a', label: 'live', records }] });
    using view = render(AccuracyChart, props);
    await tick();
    const acc = chart(view.target, ACC);
    const canvas = acc.querySelector('canvas');
    // One run: the series by its own name, the run named above the chart.
    expect(latest(acc).accuracy).toEqual(['1', '0.500']);
    const next: EvaluationRecord = {
      kind: 'evaluation',
      version: 2,
      ts: 9000,
      step: 2,
      name: 'accuracy',
      scores: { accuracy: 0.75, answered: 1, meanSteps: 2, meanToolCalls: 1, toolSuccess: 1 },
      perProblem: [],
    };
    props.runs[0].records = [...props.runs[0].records, next as RunRecord];
    flushSync();
    await tick();
    expect(latest(acc).accuracy).toEqual(['2', '0.750']);
    expect(chart(view.target, ACC)).toBe(acc);
    expect(acc.querySelector('canvas')).toBe(canvas);
    expect(dataTable(view.target).at(-2)).toEqual(['2', '0.750 (0 problems, answered 1.000, tool success 1.000)']);
  });

  it('shows empty charts with no evaluation yet, and no runs', async () => {
    using view = render(AccuracyChart, { runs: [{ id: 'a', label: 'r', records: [] }] });
    await tick();
    expect(chart(view.target, ACC).querySelector('[role="img"]')!.getAttribute('aria-label')).toContain('No data yet');
    expect(view.target.querySelector('.runs .legend-note')!.textContent).toBe('reward mode not known yet');
    using none = render(AccuracyChart, { runs: [] });
    await tick();
    expect(none.target.querySelector('.empty')!.textContent).toBe('No run selected.');
  });

  it('shows run labels literally, never as HTML', async () => {
    (window as unknown as { __pwned?: number }).__pwned = 0;
    // Beside another run, so that the legend names it too (by its tag, the label's start).
    using view = render(AccuracyChart, {
      runs: [
        { id: 'a', label: HOSTILE, records: handToolRun() },
        { id: 'b', label: 'other', records: handOutcomeRun() },
      ],
    });
    await tick();
    expect(view.target.querySelector('img, b, script')).toBeNull();
    expect(view.target.querySelector('.runs li')!.textContent).toContain(HOSTILE);
    expect(dataTable(view.target)[0][1]).toBe(HOSTILE.replace(/\s+/g, ' '));
    expect(seriesLabels(chart(view.target, ACC))[0]).toBe(`${HOSTILE.slice(0, 23)}…`);
    expect((window as unknown as { __pwned?: number }).__pwned).toBe(0);
  });
});
