/** Flags of the device bench (`bash device-bundle/run.sh [flags]`, or `npx tsx bench/device/main.ts`). */
import { parseArgs } from 'node:util';
import type { WeightFormat } from '../../src/gpu/quant';

export const SHAPES = ['0.5b', '4b'] as const;
export type ShapeName = (typeof SHAPES)[number];
const FORMATS = ['f32', 'f16', 'q8', 'q4'] as const satisfies readonly WeightFormat[];

export interface DeviceArgs {
  quick: boolean;
  /** Measure on a CPU-emulated adapter (SwiftShader) instead of refusing it. */
  allowCpu: boolean;
  /** Seconds the whole run may take; measurements that would not fit are reported as skipped. */
  budgetS: number;
  shapes: ShapeName[];
  formats: WeightFormat[];
  /** The device's peak FP32 rate the matmul is compared with; null: looked up from the adapter. */
  peakTflops: number | null;
  /** Where the JSON is written instead of stdout. */
  out: string | null;
  seed: number;
}

/** Whole-run budgets: a lent GPU gives a command 10 minutes; the full run (7.5, and the watchdog 1 more) leaves the unpacking and a margin the rest. */
export const DEFAULT_BUDGET_S = { full: 450, quick: 100 };

export const USAGE = `bash device-bundle/run.sh [--quick] [--allow-cpu] [--budget SECONDS] [--shapes 0.5b,4b] [--formats q4,f16] [--peak-tflops N]

  --quick          tiny models of the same two families and short sequences (minutes on a CPU emulator)
  --allow-cpu      measure on a CPU-emulated adapter (SwiftShader) instead of refusing it
  --budget S       seconds the whole run may take (default ${DEFAULT_BUDGET_S.full}; --quick ${DEFAULT_BUDGET_S.quick});
                   what would not fit is reported as {"skipped": "..."}
  --shapes LIST    model shapes to measure, of ${SHAPES.join(', ')} (default: both)
  --formats LIST   weight formats, of ${FORMATS.join(', ')} (default: q4,f16)
  --peak-tflops N  the device's peak FP32 TFLOP/s for the matmul's share (default: known adapters only)
  --seed N         seed of the random weights (default 1)
  --out FILE       write the JSON there instead of stdout (run.sh uses it itself: it prints the file,
                   and copies it to $OUT/device-bench.json when OUT is set)

Prints one JSON object on stdout (on a refusal, exit status 3: {"failed": "..."}); progress goes to stderr.`;

function list<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items = value.split(',').map((s) => s.trim().toLowerCase());
  const bad = items.filter((s) => !(allowed as readonly string[]).includes(s));
  if (bad.length || items.length === 0) throw new Error(`--${flag} takes a comma-separated list of ${allowed.join(', ')}; got "${value}"`);
  return [...new Set(items)] as T[];
}

function positive(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`--${flag} takes a positive number, got "${value}"`);
  return n;
}

/** Returns null for --help (the caller prints USAGE). */
export function parseDeviceArgs(argv: string[]): DeviceArgs | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      'allow-cpu': { type: 'boolean', default: false },
      budget: { type: 'string' },
      shapes: { type: 'string' },
      formats: { type: 'string' },
      'peak-tflops': { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return null;
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed)) throw new Error(`--seed takes an integer, got "${values.seed}"`);
  return {
    quick: values.quick,
    allowCpu: values['allow-cpu'],
    budgetS: positive('budget', values.budget) ?? (values.quick ? DEFAULT_BUDGET_S.quick : DEFAULT_BUDGET_S.full),
    shapes: values.shapes === undefined ? [...SHAPES] : list('shapes', values.shapes, SHAPES),
    formats: values.formats === undefined ? ['q4', 'f16'] : list('formats', values.formats, FORMATS),
    peakTflops: positive('peak-tflops', values['peak-tflops']) ?? null,
    out: values.out ?? null,
    seed,
  };
}
