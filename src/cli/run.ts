import { createWriteStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { RunRecord } from '../rl/records';
import { memorySource, runFileStream } from '../storage/index';
import { createScenario } from '../sims/scenarios/index';
import { loadProblems } from '../workers/runtime/problems';
import { EXAMPLES, exampleConfig, parseRunConfig, type ExampleName, type RunConfig } from '../workers/runtime/run-config';
import { RunLoop } from '../workers/runtime/runloop';
import { createNodeServices, readTextFile } from '../workers/runtime/services-node';
import { createBackend } from './engine';
import { isPositiveInt, number, parse, UsageError } from './args';

export const usage = `nextstate run --config RUN.json [--out RUN_FILE] [--steps N] [--policy DIR|ID] [--backend cpu|webgpu] [--json]
  nextstate run --example ${EXAMPLES.join('|')}     print a complete example config`;

/** The JSON lines a script follows: one per training step and per evaluation. */
export function eventLine(r: RunRecord): object | null {
  if (r.kind === 'train_step') return { type: 'train_step', step: r.step, version: r.version + 1, samples: r.samples, skipped: r.skipped, ...r.stats };
  if (r.kind === 'evaluation') return { type: 'evaluation', step: r.step ?? 0, version: r.version, score: r.scores.score, n: r.perProblem.length };
  return null;
}

export async function runCommand(argv: string[], out: (line: string) => void): Promise<void> {
  const v = parse(argv, {
    config: { type: 'string' },
    example: { type: 'string' },
    out: { type: 'string' },
    steps: { type: 'string' },
    policy: { type: 'string' },
    backend: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (typeof v.example === 'string') {
    if (!EXAMPLES.includes(v.example as ExampleName)) throw new UsageError(`--example must be one of ${EXAMPLES.join(', ')}`);
    out(JSON.stringify(exampleConfig(v.example as ExampleName), null, 2));
    return;
  }
  if (typeof v.config !== 'string') throw new UsageError('--config RUN.json or --example NAME is required');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(v.config, 'utf8'));
  } catch (e) {
    throw new UsageError(`${v.config}: ${(e as Error).message}`);
  }
  const config: RunConfig = parseRunConfig(raw);
  if (typeof v.policy === 'string') config.models.policy.model = v.policy;
  if (typeof v.backend === 'string') config.models.policy.backend = v.backend as 'cpu' | 'webgpu';
  config.schedule.steps = number(v, 'steps', config.schedule.steps, isPositiveInt);

  const services = await createNodeServices(config, await createBackend(config.models.policy.backend ?? 'cpu'));
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  const records: RunRecord[] = [];
  const created = Date.now();
  const loop = new RunLoop(config, services, problems, {
    append: async (rs) => void records.push(...rs),
  }, {
    onRecord: (r) => {
      const line = eventLine(r);
      if (!line) return;
      out(v.json ? JSON.stringify(line) : describe(line as Record<string, unknown>));
    },
  });
  const stop = () => loop.stop();
  process.once('SIGINT', stop);
  let status: string;
  try {
    status = (await loop.run()).status;
  } finally {
    process.off('SIGINT', stop);
  }
  const file = typeof v.out === 'string' ? v.out : `nextstate-${config.scenario.id}-${new Date(created).toISOString().replace(/[:.]/g, '-')}.nsrun`;
  const adapter = { version: services.policy.servingVersion(), ts: Date.now(), files: await services.policy.exportAdapter() };
  const source = memorySource(
    {
      config: { ...config, modelRefs: { policy: { id: config.models.policy.model } }, seeds: { run: config.seed } },
      label: config.label ?? config.scenario.id,
      notes: '',
      created,
      status: status === 'finished' ? 'finished' : 'stopped',
    },
    records,
    adapter,
  );
  await pipeline(Readable.fromWeb(runFileStream(source, { includeAdapter: true }) as NodeReadableStream), createWriteStream(file));
  if (!v.json) out(`run ${status}: ${records.length} records written to ${file}`);
}

function describe(line: Record<string, unknown>): string {
  if (line.type === 'evaluation') return `evaluation at step ${line.step} (v${line.version}): score ${(line.score as number).toFixed(3)} over ${line.n} problems`;
  const f = (x: unknown, d = 4) => (typeof x === 'number' ? x.toFixed(d) : 'n/a');
  return `step ${line.step} -> v${line.version}: loss ${f(line.loss)} kl ${f(line.kl)} grad-norm ${f(line.gradNorm)} entropy ${f(line.entropy, 3)} |A| ${f(line.meanAbsAdv, 3)}${line.skipped ? ` SKIPPED: ${line.skipped}` : ''}`;
}
