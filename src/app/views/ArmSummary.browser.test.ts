import { tick } from 'svelte';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { comparisonSetups } from '../lab/comparison';
import { defaultSetup, toRunConfig } from '../lab/setup';
import ArmSummary from './ArmSummary.svelte';
import { armLines, armOfConfig } from './derive-arms';
import { WISH_RATES } from './derive-evaluations';
import { render } from '../../../test/support/views/testing';
import { chart, latest, seriesLabels } from '../../../test/support/views/testing-dom';

function evaluation(step: number, score: number, rates: Record<string, number> = {}): RunRecord {
  return {
    kind: 'evaluation',
    version: step,
    ts: 1000 + step,
    step,
    name: 'personalization',
    scores: { score, ...rates },
    perProblem: [{ id: 'p0', score }],
  } as RunRecord;
}

/** A finished two-seed comparison: every run at 0.25 / 0.5 before training, each arm its own gain by step 4. */
function lines() {
  const gain: Record<string, number> = { binary: 0, opd: 0.25, combined: 0.375, 'combined-shuffled': 0.125 };
  const runs = comparisonSetups(defaultSetup(), 2).map((s, i) => {
    const base = i < 4 ? 0.25 : 0.5;
    const arm = s.preset.advantage.hintSource === 'shuffled' ? 'combined-shuffled' : s.method;
    return { config: toRunConfig(s), records: [evaluation(0, base), evaluation(4, base + gain[arm])] };
  });
  return armLines(runs)!;
}

describe('ArmSummary', () => {
  it('draws each arm’s mean over its seeds with the base flat, and tables every step with the range over seeds', async () => {
    using view = render(ArmSummary, { lines: lines() }, { width: '1000px' });
    await tick();
    const fig = chart(view.target, 'Personalization score per arm');
    expect(seriesLabels(fig)).toEqual(['Base (untrained)', 'Binary RL', 'OPD', 'Combined', 'Combined, shuffled hints']);
    expect(latest(fig)['Base (untrained)']).toEqual(['4', '0.375']);
    expect(latest(fig)['Combined']).toEqual(['4', '0.750']);
    const rows = [...view.target.querySelectorAll<HTMLTableRowElement>('[data-testid="arm-table"] tbody tr')];
    expect(rows.map((r) => r.dataset.arm)).toEqual(['base', 'binary', 'opd', 'combined', 'combined-shuffled']);
    const cells = (arm: string) => [...rows.find((r) => r.dataset.arm === arm)!.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells('base')).toEqual(['8', '0.375 (0.250–0.500)', '0.375 (0.250–0.500)']);
    expect(cells('combined')).toEqual(['2', '0.375 (0.250–0.500)', '0.750 (0.625–0.875)']);
    expect(cells('combined-shuffled')).toEqual(['2', '0.375 (0.250–0.500)', '0.500 (0.375–0.625)']);
    // No wish rates in these evaluations: no table of wishes.
    expect(view.target.querySelector('[data-testid="arm-wishes"]')).toBeNull();
  });

  it('tables the wishes each arm’s stories meet, the name beside the other-child control', async () => {
    // Every rate 0.5 before training and 0.75 after, but the name: the other child's hints do not teach it.
    const name: Record<string, number> = { opd: 0.625, 'opd-other-child': 0.125 };
    const runs = comparisonSetups(defaultSetup(), 2, { otherChild: true }).map((s, i) => {
      const config = toRunConfig(s);
      const arm = armOfConfig(config)!;
      const seed = i < 6 ? 0 : 0.125;
      const rates = (rate: number, nameRate: number) => ({
        ...Object.fromEntries(WISH_RATES.map((w) => [w.key, rate])),
        'wish:name': nameRate + seed,
      });
      return { config, records: [evaluation(0, 0.25, rates(0.5, 0)), evaluation(4, 0.5, rates(0.75, name[arm] ?? 0.5))] };
    });
    using view = render(ArmSummary, { lines: armLines(runs)! }, { width: '1000px' });
    await tick();
    const table = view.target.querySelector<HTMLTableElement>('[data-testid="arm-wishes"]')!;
    expect(table.caption!.textContent).toMatch(/each wish at step 4 \(the base: step 0\)/);
    expect(table.caption!.textContent).toContain('The name is the one wish no other child shares');
    const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent!.replace(/\s+/g, ' ').trim());
    expect(heads).toEqual(['Arm', 'pet', 'name no other child shares it', 'favourite', 'sleep', 'gentle', 'stories']);
    const rows = [...table.querySelectorAll<HTMLTableRowElement>('tbody tr')];
    expect(rows.map((r) => r.dataset.arm)).toEqual(['base', 'binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child']);
    const cells = (arm: string) => [...rows.find((r) => r.dataset.arm === arm)!.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells('base')).toEqual(['0.500', '0.063 (0.000–0.125)', '0.500', '0.500', '0.500', '0.500']);
    expect(cells('opd')).toEqual(['0.750', '0.688 (0.625–0.750)', '0.750', '0.750', '0.750', '0.750']);
    expect(cells('opd-other-child')).toEqual(['0.750', '0.188 (0.125–0.250)', '0.750', '0.750', '0.750', '0.750']);
    // The table fits beside the chart without scrolling the page sideways.
    expect(table.closest('.table-wrap')!.scrollWidth).toBeLessThanOrEqual(1000);
  });
});
