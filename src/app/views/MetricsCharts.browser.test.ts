import { describe, expect, it } from 'vitest';
import { flushSync, tick } from 'svelte';
import type { RunRecord } from '../../rl/records';
import MetricsCharts from './MetricsCharts.svelte';
import { recordedRun, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';
import { chart, latest, seriesLabels } from '../../../test/support/views/testing-dom';

function charts(target: HTMLElement): HTMLElement[] {
  return [...target.querySelectorAll<HTMLElement>('figure.chart')];
}

/** A second run: the recorded one with its rewards and losses changed. */
function otherRun(): RunRecord[] {
  return recordedRun().map((r) => (r.kind === 'train_step' ? { ...r, stats: { ...r.stats, loss: (r.stats.loss ?? 0) + 1 } } : r));
}

describe('MetricsCharts', () => {
  it("says what the storyteller's score means, with each wish's rate beside it, and leaves the score chart out where nothing evaluates", async () => {
    const records = recordedRun().map((r) =>
      r.kind === 'evaluation'
        ? { ...r, scores: { ...r.scores, 'wish:pet': 0.75, 'wish:name': 0, 'wish:favourite': 0.25, 'wish:sleep': 0.5, 'wish:gentle': 1, story: 1 } }
        : r,
    );
    using view = render(MetricsCharts, { runs: [{ id: 'a', label: 'storyteller', records }] }, { width: '390px' });
    await tick();
    expect(view.target.querySelector('[data-testid="score-meaning"]')!.textContent).toContain('each wish missed costs 0.25');
    expect(view.target.querySelector('[data-testid="score-wishes"]')!.textContent!.replace(/\s+/g, ' ')).toBe(
      ' at step 2, score 0.83; the share of replies meeting each wish: pet 0.75 · name 0.00 · favourite 0.25 · sleep 0.50 · gentle 1.00; replies that are stories 1.00',
    );
    using talk = render(MetricsCharts, { runs: [{ id: 't', label: 'talk', records: [] }], scoreChart: false });
    await tick();
    expect(charts(talk.target).map((f) => f.querySelector('h4')!.textContent)).not.toContain('Personalization score');
    expect(talk.target.querySelector('[data-testid="score-meaning"]')).toBeNull();
  });

  it('draws every chart with a heading, an aria-label and one series per run', async () => {
    using view = render(
      MetricsCharts,
      {
        runs: [
          { id: 'a', label: 'combined', records: recordedRun() },
          { id: 'b', label: 'binary', records: otherRun() },
        ],
      },
      { width: '1200px' },
    );
    await tick();
    const figs = charts(view.target);
    expect(figs.map((f) => f.querySelector('h4')!.textContent)).toEqual([
      'Personalization score',
      'Mean reward of the trained samples',
      'Binary judge votes',
      'OPD hint acceptance',
      'Mean |A|',
      'Loss',
      'KL to the reference',
      'Clip fractions',
      'Entropy',
      'Rollout–train gap',
      'Dropped turns',
      'Tokens per second',
    ]);
    for (const f of figs) {
      expect(f.querySelector('canvas')).not.toBeNull();
      expect(f.querySelector('[role="img"]')!.getAttribute('aria-label')).toMatch(/\S+\./);
    }
    expect(seriesLabels(chart(view.target, 'Loss'))).toEqual(['combined', 'binary']);
    // The two start from the same untrained score: one baseline for both, not one on top of the other.
    expect(seriesLabels(chart(view.target, 'Personalization score'))).toEqual(['combined', 'binary', 'baseline of all 2 runs (step 0)']);
    expect(seriesLabels(chart(view.target, 'Binary judge votes'))).toHaveLength(6);
    expect(seriesLabels(chart(view.target, 'Rollout–train gap'))).toEqual(['combined · log-prob', 'combined · A_OPD', 'binary · log-prob', 'binary · A_OPD']);
    // Latest values, in the hidden table: loss at step 2 of each run.
    const loss = latest(chart(view.target, 'Loss'));
    expect(loss.combined[0]).toBe('2');
    expect(Number(loss.binary[1]) - Number(loss.combined[1])).toBeCloseTo(1, 3);
    expect(latest(chart(view.target, 'Personalization score'))['baseline of all 2 runs (step 0)'][1]).toBe('0.750');
    // Runs differ by colour.
    const strokes = [...view.target.querySelectorAll('.u-legend')][5].querySelectorAll('.u-series .u-marker');
    expect(getComputedStyle(strokes[1]).borderColor).not.toBe(getComputedStyle(strokes[2]).borderColor);
  });

  it('gives a run with a starting score of its own its own baseline, and tells one run’s vote lines apart by colour and width', async () => {
    const lower = recordedRun().map((r, i, all) =>
      r.kind === 'evaluation' && all.findIndex((x) => x.kind === 'evaluation') === i ? { ...r, scores: { ...r.scores, score: 0.5 } } : r,
    );
    using view = render(
      MetricsCharts,
      {
        runs: [
          { id: 'a', label: 'seed 1', records: recordedRun() },
          { id: 'b', label: 'seed 2', records: lower },
          { id: 'c', label: 'seed 1 again', records: otherRun() },
        ],
      },
      { width: '1200px' },
    );
    await tick();
    expect(seriesLabels(chart(view.target, 'Personalization score'))).toEqual([
      'seed 1',
      'seed 2',
      'seed 1 again',
      'baseline (step 0): seed 1, seed 1 again',
      'seed 2 · baseline',
    ]);

    using single = render(MetricsCharts, { runs: [{ id: 'a', label: 'one', records: recordedRun() }] }, { width: '1200px' });
    await tick();
    const markers = [...chart(single.target, 'Binary judge votes').querySelectorAll('.u-legend .u-series .u-marker')].slice(1);
    const colours = markers.map((m) => getComputedStyle(m).borderColor);
    expect(new Set(colours).size).toBe(3);
  });

  it('updates in place when records are appended', async () => {
    const records = recordedRun();
    const cut = records.findIndex((r) => r.kind === 'train_step' && r.step === 2);
    const props = reactive({ runs: [{ id: 'a', label: 'live', records: records.slice(0, cut) }] });
    using view = render(MetricsCharts, props, { width: '900px' });
    await tick();
    const loss = chart(view.target, 'Loss');
    const canvas = loss.querySelector('canvas');
    expect(latest(loss).Loss[0]).toBe('1');

    for (const r of records.slice(cut)) props.runs[0].records = [...props.runs[0].records, r];
    flushSync();
    await tick();
    expect(latest(loss).Loss[0]).toBe('2');
    expect(latest(chart(view.target, 'Personalization score')).score[0]).toBe('2');
    // Same chart and canvas: updated through setData, not rebuilt.
    expect(chart(view.target, 'Loss')).toBe(loss);
    expect(loss.querySelector('canvas')).toBe(canvas);
    // One run: each series by its own name, the run named above the charts.
    expect(seriesLabels(loss)).toEqual(['Loss']);
  });

  it('follows its container’s width at a fixed height', async () => {
    using view = render(MetricsCharts, { runs: [{ id: 'a', label: 'r', records: recordedRun() }] }, { width: '1000px' });
    await tick();
    const canvas = () => chart(view.target, 'Loss').querySelector('canvas')!;
    const h = canvas().getBoundingClientRect().height;
    const w = canvas().getBoundingClientRect().width;
    view.target.style.width = '420px';
    await new Promise((r) => setTimeout(r, 100));
    expect(canvas().getBoundingClientRect().width).toBeLessThan(w);
    expect(canvas().getBoundingClientRect().width).toBeLessThanOrEqual(420);
    expect(canvas().getBoundingClientRect().height).toBe(h);
  });

  it('names overlaid runs by what tells them apart, so every legend fits a phone', async () => {
    using view = render(
      MetricsCharts,
      {
        runs: [
          { id: 'a', label: 'storyteller · Combined · storyteller-demo · baseline', records: recordedRun() },
          { id: 'b', label: 'storyteller · OPD · storyteller-demo · baseline', records: otherRun() },
        ],
      },
      { width: '390px' },
    );
    await tick();
    expect(seriesLabels(chart(view.target, 'Tokens per second'))).toEqual(['Combined · generate', 'Combined · train', 'OPD · generate', 'OPD · train']);
    const legends = [...view.target.querySelectorAll('.u-legend .u-series .u-label')].map((l) => l.textContent ?? '');
    expect(legends.filter((t) => t.length >= 40)).toEqual([]);
    // The tags are in the labels above the charts, which name the runs whole.
    expect(view.target.querySelectorAll('[data-testid="run-tag"]')).toHaveLength(0);
  });

  it('tells two runs of the same label apart by their short ids, in the legends and above the charts', async () => {
    using view = render(MetricsCharts, {
      runs: [
        { id: '3f9a1c22-aaaa', label: 'same', records: recordedRun() },
        { id: '77b0e4aa-bbbb', label: 'same', records: otherRun() },
      ],
    });
    await tick();
    expect(seriesLabels(chart(view.target, 'Loss'))).toEqual(['#3f9a1c', '#77b0e4']);
    expect([...view.target.querySelectorAll('[data-testid="run-tag"]')].map((t) => t.textContent)).toEqual(['#3f9a1c', '#77b0e4']);
    expect(chart(view.target, 'Loss').querySelectorAll('.nsv-visually-hidden tbody tr')).toHaveLength(2);
  });

  it('shows empty charts before the first step', async () => {
    using view = render(MetricsCharts, { runs: [{ id: 'a', label: 'r', records: [] }] });
    await tick();
    expect(charts(view.target)).toHaveLength(12);
    expect(chart(view.target, 'Loss').querySelector('[role="img"]')!.getAttribute('aria-label')).toContain('No data yet');
  });
});
