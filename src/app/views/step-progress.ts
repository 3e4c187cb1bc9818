/**
 * How far a live run is from its next train step, in one line. A run that waits on people
 * (talking to the policy) trains only once enough judged replies have filled a batch, and without
 * this line it would sit at "step 0" with nothing saying what it waits for. Pure; tested in Node.
 */
import type { RunSnapshot } from '../../runtime/runloop';

/** The batch size and planned steps a stored run config names, where it names them. */
function planOf(config: unknown): { batch: number | null; steps: number | null } {
  const c = config as { preset?: { batch?: { size?: unknown } }; schedule?: { steps?: unknown } } | null | undefined;
  const batch = c?.preset?.batch?.size;
  const steps = c?.schedule?.steps;
  return { batch: typeof batch === 'number' && batch > 0 ? batch : null, steps: typeof steps === 'number' ? steps : null };
}

/**
 * "Step 2 trained: the policy is now v2. 14 more judged replies until step 3 (2 of 16 samples in)",
 * or null where the config names no batch size (a policy on a server batches there).
 */
export function nextStepLine(snapshot: Pick<RunSnapshot, 'step' | 'version' | 'bufferedSamples' | 'batchesWaiting'>, config: unknown): string | null {
  const { batch, steps } = planOf(config);
  if (batch === null) return null;
  const landed = snapshot.step > 0 ? `Step ${snapshot.step} trained: the policy is now v${snapshot.version}. ` : '';
  if (steps !== null && snapshot.step >= steps) return `${landed}${steps === 1 ? 'That was its only step.' : `All ${steps} steps are trained.`}`;
  if (snapshot.batchesWaiting > 0) return `${landed}Step ${snapshot.step + 1} is training on a full batch.`;
  const need = Math.max(1, batch - snapshot.bufferedSamples);
  return `${landed}${need} more judged ${need === 1 ? 'reply' : 'replies'} until step ${snapshot.step + 1} (${snapshot.bufferedSamples} of ${batch} samples in).`;
}
