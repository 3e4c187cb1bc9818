import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import RunPanels from '../components/RunPanels.svelte';
import { defaultSetup, toRunConfig } from '../lab/setup';
import WishRates from './WishRates.svelte';
import { recordedRun, render } from '../../../test/support/views/testing';

/** The recorded storyteller run, its evaluations carrying wish rates as a run of this build writes them. */
function withWishRates(): RunRecord[] {
  const rates = [
    { 'wish:pet': 0.5, 'wish:name': 0, 'wish:favourite': 0.25, 'wish:sleep': 0, 'wish:gentle': 1, story: 0.75, keywords: 0.4 },
    { 'wish:pet': 0.75, 'wish:name': 0.5, 'wish:favourite': 0.25, 'wish:sleep': 0.25, 'wish:gentle': 1, story: 1, keywords: 0.5 },
  ];
  let i = 0;
  return recordedRun().map((r) => (r.kind === 'evaluation' && r.name === 'personalization' ? { ...r, scores: { ...r.scores, ...rates[i++] } } : r));
}

const rowsOf = (target: HTMLElement) =>
  [...target.querySelectorAll<HTMLTableRowElement>('[data-testid="run-wishes"] tbody tr')].map((tr) =>
    [tr.querySelector('th')!, ...tr.querySelectorAll('td')].map((c) => c.textContent!.replace(/\s+/g, ' ').trim()),
  );

describe('WishRates', () => {
  it('tables each wish before training and now, the name marked as the one no other child shares', () => {
    using view = render(WishRates, { records: withWishRates() });
    const table = view.target.querySelector('[data-testid="run-wishes"]')!;
    expect(table.querySelector('caption')!.textContent).toContain('before training → now');
    expect([...table.querySelectorAll('thead th')].map((th) => th.textContent)).toEqual(['Wish', 'Before (step 0)', 'Now (step 2)', 'Change']);
    expect(rowsOf(view.target)).toEqual([
      ['pet', '0.50', '0.75', '+0.25'],
      ['name the one no other child shares', '0.00', '0.50', '+0.50'],
      ['favourite', '0.25', '0.25', '0.00'],
      ['sleep', '0.00', '0.25', '+0.25'],
      ['gentle', '1.00', '1.00', '0.00'],
      ['stories', '0.75', '1.00', '+0.25'],
    ]);
  });

  it('waits for a later evaluation', () => {
    const first = withWishRates().filter((r) => r.kind !== 'evaluation' || r.step === 0);
    using view = render(WishRates, { records: first });
    expect(view.target.querySelector('[data-testid="run-wishes"] thead')!.textContent).toContain('Now (no later evaluation yet)');
    expect(rowsOf(view.target)[1]).toEqual(['name the one no other child shares', '0.00', '–', '–']);
  });

  it('shows nothing for evaluations without wish rates (older logs, other scenarios)', () => {
    using view = render(WishRates, { records: recordedRun() });
    expect(view.target.querySelector('[data-testid="run-wishes"]')).toBeNull();
    expect(view.target.textContent!.trim()).toBe('');
  });

  it('is among a run’s views, above the answers before and after training', () => {
    const records = withWishRates();
    using view = render(RunPanels, { runId: 'r1', config: toRunConfig(defaultSetup()), records, chartRuns: [{ id: 'r1', label: 'r1', records }] });
    const section = view.target.querySelector('section[aria-labelledby="ba-heading"]')!;
    const table = section.querySelector('[data-testid="run-wishes"]')!;
    const answers = section.querySelector('.before-after')!;
    expect(table.compareDocumentPosition(answers) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });
});
