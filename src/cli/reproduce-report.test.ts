import { describe, expect, it } from 'vitest';
import { exampleConfig } from '../runtime/run-config';
import { configForMethod } from './reproduce';
import { reproductionMarkdown, reproductionSvg, reproductionTable, type RunScores } from './reproduce-report';

const runs: RunScores[] = [
  {
    method: 'binary',
    seed: 1,
    scores: [
      { step: 0, score: 0.25 },
      { step: 8, score: 0 },
    ],
  },
  {
    method: 'binary',
    seed: 2,
    scores: [
      { step: 0, score: 0.5 },
      { step: 8, score: 0.5 },
    ],
  },
  {
    method: 'combined',
    seed: 1,
    scores: [
      { step: 0, score: 0.25 },
      { step: 8, score: 0.75 },
    ],
  },
  {
    method: 'combined',
    seed: 2,
    scores: [
      { step: 0, score: 0.5 },
      { step: 8, score: 1 },
    ],
  },
];

describe('the reproduction report', () => {
  it('tabulates mean and sample spread per method and step, the base from each seed’s step 0', () => {
    const table = reproductionTable(runs, [0, 8]);
    expect(table.seeds).toEqual([1, 2]);
    expect(table.rows.map((r) => r.method)).toEqual(['base', 'binary', 'combined']);
    expect(table.rows[0].cells[0]).toMatchObject({ mean: 0.375, perSeed: [0.25, 0.5] });
    expect(table.rows[2].cells[1]!.mean).toBe(0.875);
    expect(table.rows[2].cells[1]!.sd).toBeCloseTo(Math.SQRT1_2 * 0.25, 12);
    const md = reproductionMarkdown(table);
    expect(md).toContain('| Combined | 0.375 ± 0.177 | 0.875 ± 0.177 | 0.76 |');
    expect(md).toContain('| Base (no training) | 0.375 ± 0.177 |  | 0.17 |');
  });

  it('draws one line per method in plain SVG, without script', () => {
    const svg = reproductionSvg(runs);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('>Binary RL</text>');
    expect(svg).not.toMatch(/<script|on\w+=/i);
  });

  it('gives each method its own preset and keeps the config’s training settings', () => {
    const base = exampleConfig('storyteller');
    expect(configForMethod(base, 'combined')).toBe(base);
    const opd = configForMethod(base, 'opd');
    expect(opd.preset.method).toBe('opd');
    expect(opd.preset.optimizer).toEqual(base.preset.optimizer);
    expect(opd.label).toBe('storyteller (opd, seed 1)');
  });
});
