import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord, TrainStepRecord } from '../rl/records';
import { runCli } from '../../test/support/cli/run-cli';
import { testConfig } from '../../test/support/storage/fixtures';
import { stepSeries } from '../storage/step-series';
import { exampleConfig } from '../runtime/run-config';
import { memorySource, runFileStream } from '../storage/runfile';
import { metricsCsv, metricsJsonl, TRL_NAMES, trlMetricRows } from './metrics-export';

const recorded: RunRecord[] = readFileSync(new URL('../../test/fixtures/recorded-run.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as RunRecord);
const trainSteps = recorded.filter((r): r is TrainStepRecord => r.kind === 'train_step');

describe('metrics under TRL names', () => {
  it('has one row per optimizer step plus the step-0 evaluation, with every charted series under its TRL name', () => {
    const rows = trlMetricRows(recorded, { learningRate: 1e-4 });
    const series = stepSeries(recorded);
    expect(trainSteps.length).toBeGreaterThan(1);
    expect(rows.map((r) => r['train/global_step'])).toEqual([0, ...trainSteps.map((s) => s.step)]);
    expect(rows[0]).toEqual({ 'train/global_step': 0, 'eval/personalization': 0.75 });
    for (const [i, point] of series.entries()) {
      const row = rows[i + 1];
      for (const [field, name] of Object.entries(TRL_NAMES)) expect(row[name], name).toBe(point[field as keyof typeof TRL_NAMES]);
      expect(row['train/grad_norm']).toBe(trainSteps[i].stats.gradNorm);
      expect(row['train/learning_rate']).toBe(1e-4);
    }
    // TRL's num_tokens is cumulative; step_time is in seconds.
    const tokens = trainSteps.map((s) => s.stats.tokens);
    expect(rows.at(-1)!['train/num_tokens']).toBe(tokens.reduce((a, b) => a + b, 0));
    expect(rows[1]['train/step_time']).toBe(trainSteps[0].stats.stepMs! / 1000);
    // Each later evaluation sits in the row of the step it followed.
    for (const e of recorded.filter((r) => r.kind === 'evaluation' && (r.step ?? 0) > 0)) {
      if (e.kind !== 'evaluation') continue;
      expect(rows.find((r) => r['train/global_step'] === e.step)!['eval/personalization']).toBe(e.scores.score);
    }
  });

  it('writes CSV with a column per name, empty cells for missing values, and text a spreadsheet cannot run', () => {
    const step = { ...trainSteps[0], step: 1, skipped: '=HYPERLINK("x"), a "quoted" reason' };
    const rows = trlMetricRows([step, { ...trainSteps[0], step: 2, stats: { ...trainSteps[0].stats, gradNorm: null } }]);
    const [header, first, second] = metricsCsv(rows).trimEnd().split('\n');
    const columns = header.split(',');
    expect(columns[0]).toBe('train/global_step');
    expect(columns).toContain('train/clip_ratio/low_mean');
    expect(first).toContain(`"'=HYPERLINK(""x""), a ""quoted"" reason"`);
    expect(second.split(',')[columns.indexOf('train/grad_norm')]).toBe('');
    expect(
      metricsJsonl(rows)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toEqual(rows);
  });

  it('nextstate export --metrics writes CSV for a .csv name and JSON lines otherwise, or to stdout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-metrics-'));
    const file = join(dir, 'run.nsrun');
    const config = testConfig({ ...exampleConfig('storyteller') });
    const source = memorySource({ config, label: 'metrics', notes: '', created: 1_000, status: 'finished' }, recorded);
    writeFileSync(file, new Uint8Array(await new Response(runFileStream(source)).arrayBuffer()));

    const csv = await runCli('export', file, '--metrics', join(dir, 'm.csv'));
    expect(csv).toMatchObject({ code: 0, out: [] });
    expect(csv.err[0]).toBe(`${trainSteps.length + 1} steps of metrics written to ${join(dir, 'm.csv')}`);
    expect(readFileSync(join(dir, 'm.csv'), 'utf8')).toBe(metricsCsv(trlMetricRows(recorded, { learningRate: config.preset.optimizer.lr })));

    const stdout = await runCli('export', file, '--metrics', '-');
    expect(stdout.code).toBe(0);
    expect(JSON.parse(stdout.out[1])).toMatchObject({ 'train/global_step': trainSteps[0].step, 'train/loss': trainSteps[0].stats.loss });
  });
});
