import { tick } from 'svelte';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { comparisonSetups } from '../lab/comparison';
import { defaultSetup, toRunConfig } from '../lab/setup';
import ArmSummary from './ArmSummary.svelte';
import { armLines } from './derive-arms';
import { render } from '../../../test/support/views/testing';
import { chart, latest, seriesLabels } from '../../../test/support/views/testing-dom';

function evaluation(step: number, score: number): RunRecord {
  return {
    kind: 'evaluation',
    version: step,
    ts: 1000 + step,
    step,
    name: 'personalization',
    scores: { score },
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
  });
});
