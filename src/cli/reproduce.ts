/**
 * `nextstate reproduce`: the paper's comparison in one command. For every seed it runs the three
 * methods from the same config (each with its own preset), writes their run files, and builds the
 * table and chart of the personalization score from their evaluation records. The base row is
 * each seed's untrained policy, the step-0 evaluation every method starts from.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { METHODS, presetSwitchedTo, type MethodName } from '../rl/presets';
import type { EvaluationRecord } from '../rl/records';
import { laptopOverrides, parseRunConfig, type RunConfig } from '../runtime/run-config';
import { isPositiveInt, number, parse, required, UsageError } from './args';
import { reproductionMarkdown, reproductionSvg, reproductionTable, type RunScores } from './reproduce-report';
import { runToFile } from './run';

export const usage = `nextstate reproduce --config RUN.json --out DIR [--seeds 1,2,3] [--steps 16] [--eval-every 8]
    [--methods binary,opd,combined] [--policy DIR|ID] [--backend cpu|webgpu] [--json]
  Runs every method for every seed; writes DIR/<method>-seed<N>.nsrun, DIR/reproduction.json,
  DIR/reproduction.md and DIR/reproduction.svg`;

function list<T>(text: string, name: string, read: (item: string) => T | null): T[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const out = items.map((item) => {
    const x = read(item);
    if (x === null) throw new UsageError(`--${name}: ${JSON.stringify(item)} is not valid`);
    return x;
  });
  if (!out.length) throw new UsageError(`--${name} names nothing`);
  return out;
}

/** The config with `method` and that method's preset, keeping the config's own overrides of it. */
export function configForMethod(config: RunConfig, method: MethodName): RunConfig {
  if (config.method === method) return config;
  const preset = presetSwitchedTo(method, config.preset, laptopOverrides(config.scenario.id));
  return { ...config, method, preset, label: `${config.scenario.id} (${method}, seed ${config.seed})` };
}

export async function reproduceCommand(argv: string[], out: (line: string) => void): Promise<void> {
  const v = parse(argv, {
    config: { type: 'string' },
    out: { type: 'string' },
    seeds: { type: 'string' },
    steps: { type: 'string' },
    'eval-every': { type: 'string' },
    methods: { type: 'string' },
    policy: { type: 'string' },
    backend: { type: 'string' },
    json: { type: 'boolean' },
  });
  const file = required(v, 'config');
  const dir = required(v, 'out');
  let base: RunConfig;
  try {
    base = parseRunConfig(JSON.parse(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new UsageError(`${file}: ${(e as Error).message}`);
  }
  const seeds = list(String(v.seeds ?? '1,2,3'), 'seeds', (s) => (/^-?\d+$/.test(s) ? Number(s) : null));
  const methods = list(String(v.methods ?? METHODS.join(',')), 'methods', (m) => (METHODS.includes(m as MethodName) ? (m as MethodName) : null));
  const steps = number(v, 'steps', 16, isPositiveInt);
  const evalEvery = number(v, 'eval-every', Math.max(1, Math.floor(steps / 2)), isPositiveInt);
  if (typeof v.policy === 'string') base.models.policy.model = v.policy;
  if (typeof v.backend === 'string') base.models.policy.backend = v.backend as 'cpu' | 'webgpu';
  mkdirSync(dir, { recursive: true });

  const runs: RunScores[] = [];
  for (const seed of seeds) {
    for (const method of methods) {
      const config = configForMethod({ ...base, seed, schedule: { ...base.schedule, steps, evalEvery } }, method);
      const t0 = Date.now();
      const scores: RunScores['scores'] = [];
      const { status, records, file: written } = await runToFile(config, { file: join(dir, `${method}-seed${seed}.nsrun`) });
      for (const r of records) {
        if (r.kind === 'evaluation') scores.push({ step: (r as EvaluationRecord).step ?? 0, score: (r as EvaluationRecord).scores.score });
      }
      if (status !== 'finished') throw new Error(`the ${method} run of seed ${seed} ${status}; see ${written}`);
      runs.push({ method, seed, scores });
      const line = { type: 'run', method, seed, scores, file: written, seconds: (Date.now() - t0) / 1000 };
      out(
        v.json
          ? JSON.stringify(line)
          : `${method} seed ${seed}: ${scores.map((s) => `${s.step}:${s.score.toFixed(3)}`).join(' -> ')} (${line.seconds.toFixed(0)} s, ${written})`,
      );
    }
  }
  const reportSteps = [...new Set([0, ...runs.flatMap((r) => r.scores.map((s) => s.step))])].sort((a, b) => a - b);
  const table = reproductionTable(runs, reportSteps);
  const command = `nextstate reproduce --config ${file} --seeds ${seeds.join(',')} --steps ${steps} --eval-every ${evalEvery} --methods ${methods.join(',')}`;
  const json = { command, policy: base.models.policy.model, scenario: base.scenario, table, runs };
  writeFileSync(join(dir, 'reproduction.json'), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(dir, 'reproduction.md'), `${reproductionMarkdown(table)}\n\nMade by \`${command}\`.\n`);
  writeFileSync(join(dir, 'reproduction.svg'), `${reproductionSvg(runs)}\n`);
  out(v.json ? JSON.stringify({ type: 'table', ...table }) : reproductionMarkdown(table));
}
