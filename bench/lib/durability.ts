/**
 * What strict IndexedDB durability costs a training step. A step's writes are replayed as the
 * lab makes them (per turn: the interaction, the judge's votes and results, the sample; then
 * the checkpoint and the step's records) through a RunStore with strict writes and through one
 * with the browser's default, alternating, and the medians of the wall time per step compared.
 *
 * Only a page whose profile lives on disk measures anything: an incognito context (Playwright's
 * default) keeps IndexedDB in memory, where a flush costs nothing.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../../src/gpu/peft';
import { writeSafetensors } from '../../src/models/safetensors';
import type { RunRecord } from '../../src/rl';
import { boundary, testConfig, trainStep, turnRecords, uniqueDbName } from '../../test/support/storage/fixtures';
import { RunStore } from '../../src/storage/store';
import { median, rate, round } from './stats';
import type { DurabilityCell } from './types';

export interface DurabilityPlan {
  /** Timed steps per mode (after one untimed step each). */
  steps: number;
  /** Turns whose records a step writes before its own: the lab's samples per step. */
  turnsPerStep: number;
  /** Size of the checkpoint each step saves (a LoRA adapter's safetensors). */
  adapterBytes: number;
}

export const DURABILITY_PLAN: DurabilityPlan = { steps: 16, turnsPerStep: 16, adapterBytes: 4_000_000 };

function adapter(bytes: number, seed: number): PeftFiles {
  const data = Float32Array.from({ length: Math.max(1, Math.floor(bytes / 4)) }, (_, i) => ((i * 2654435761 + seed) % 1000) / 1000);
  return {
    [PEFT_WEIGHTS]: writeSafetensors([{ name: 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', shape: [data.length], data }]),
    [PEFT_CONFIG]: JSON.stringify({ peft_type: 'LORA', r: 16, lora_alpha: 32 }),
  };
}

/** One step's writes, in the lab's order and grouping (three commits a turn, then the step's). */
async function writeStep(store: RunStore, runId: string, step: number, plan: DurabilityPlan, files: PeftFiles): Promise<number> {
  const t0 = performance.now();
  for (let turn = 1; turn <= plan.turnsPerStep; turn++) {
    const [interaction, ...rest] = turnRecords(`s${step}-${turn}`, 1, step, Date.now());
    const sample = rest.pop() as RunRecord;
    await store.appendMany(runId, [interaction]);
    await store.appendMany(runId, rest);
    await store.appendMany(runId, [sample]);
  }
  await store.saveAdapter(runId, step + 1, files);
  await store.appendMany(runId, [trainStep(step, step, Date.now()), boundary(step, Date.now())]);
  return performance.now() - t0;
}

type Mode = 'default' | 'strict';
const MODES: readonly Mode[] = ['default', 'strict'];

export async function measureDurability(plan: DurabilityPlan = DURABILITY_PLAN): Promise<DurabilityCell> {
  const files = adapter(plan.adapterBytes, 1);
  const stores = new Map(MODES.map((m) => [m, new RunStore({ name: uniqueDbName(`bench-durability-${m}`), durableWrites: m })]));
  const samples = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
  try {
    const runs = new Map<Mode, string>();
    for (const m of MODES) runs.set(m, await stores.get(m)!.createRun(testConfig(), `durability ${m}`));
    // Alternating, so a disk that slows down over the run weighs on both modes alike; step 0
    // of each is the untimed warm-up (opening the connections, growing the files).
    for (let step = 0; step <= plan.steps; step++) {
      for (const m of MODES) {
        const ms = await writeStep(stores.get(m)!, runs.get(m)!, step, plan, files);
        if (step > 0) samples.get(m)!.push(ms);
      }
    }
  } finally {
    for (const store of stores.values()) {
      store.close();
      await store.db.delete().catch(() => {});
    }
  }
  const [relaxed, strict] = MODES.map((m) => samples.get(m)!);
  return {
    turnsPerStep: plan.turnsPerStep,
    adapterBytes: files[PEFT_WEIGHTS].byteLength,
    transactionsPerStep: plan.turnsPerStep * 3 + 2,
    strictTransactionsPerStep: 2,
    msPerStep: { default: rate(relaxed, 1), strict: rate(strict, 1) },
    extraMsPerStep: round(median(strict) - median(relaxed)),
  };
}
