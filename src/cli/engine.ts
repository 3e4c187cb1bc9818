/** What every engine subcommand needs: a backend by name and a policy from a folder or hub id. */
import { BACKEND_NAMES, type Backend, type BackendName } from '../gpu/backend';
import { nodeBackend } from '../gpu/backend-node';
import { resolveWeightFormat } from '../gpu/load';
import { formatOf, QUANTIZE_FORMATS, type Quantize } from '../gpu/plan';
import { Policy } from '../gpu/policy';
import type { WeightFormat } from '../gpu/quant';
import { ModelSourceError } from '../gpu/errors';
import { checkRevision } from '../models/hub';
import { modelSource } from '../models/source-node';
import { EnginePolicyService, type PolicyService } from '../runtime/policy-service';
import { UsageError } from './args';
import { loadProgress } from './load-progress';

export const BACKEND_OPTION = { backend: { type: 'string' as const, default: 'cpu' } };
export const BACKEND_USAGE = `[--backend ${BACKEND_NAMES.join('|')}]`;
export const QUANTIZE_OPTION = { quantize: { type: 'string' as const } };
export const QUANTIZE_USAGE = `[--quantize ${QUANTIZE_FORMATS.join('|')}]`;
export const REVISION_OPTION = { revision: { type: 'string' as const } };
export const REVISION_USAGE = '[--revision REV]';
export const REVISION_NOTE =
  '--revision loads a hub model at a branch, tag or commit (default main). Hub models are kept in the Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub); HF_TOKEN is sent to the hub for gated models.';

/** --revision, checked; undefined when not given. */
export function revisionOption(v: Record<string, unknown>): string | undefined {
  const x = v.revision;
  if (x === undefined) return undefined;
  try {
    return checkRevision(String(x));
  } catch (e) {
    throw e instanceof ModelSourceError ? new UsageError(`--revision: ${e.message}`) : e;
  }
}

export const QUANTIZE_NOTE = '--quantize stores the weight matrices as f32 (none), f16, q8 or q4; by default f16 on webgpu, f32 on cpu.';

/** --quantize as the planner names formats ('none': f32); undefined when not given. */
export function quantizeOption(v: Record<string, unknown>): Quantize | undefined {
  const x = v.quantize;
  if (x === undefined) return undefined;
  if (!QUANTIZE_FORMATS.includes(x as Quantize))
    throw new UsageError(`--quantize must be one of ${QUANTIZE_FORMATS.join(', ')} (none: f32), got ${JSON.stringify(x)}`);
  return x as Quantize;
}

/** --quantize as the engine's weight format; undefined when not given. */
export function weightFormatOption(v: Record<string, unknown>): WeightFormat | undefined {
  const q = quantizeOption(v);
  return q && formatOf(q);
}

/** --backend, checked. */
export function backendOption(kind: unknown): BackendName {
  if (!BACKEND_NAMES.includes(kind as BackendName)) throw new UsageError(`--backend must be one of ${BACKEND_NAMES.join(', ')}, got ${JSON.stringify(kind)}`);
  return kind as BackendName;
}

/** The backend by name (nodeBackend: one fast CPU backend per process). */
export async function createBackend(kind: unknown): Promise<Backend> {
  return nodeBackend(backendOption(kind));
}

/**
 * The policy with its weights stored as `weightFormat` ('auto', the default: f16 on WebGPU, f32
 * on the CPU), and the format that meant. Its download and conversion show on `progress`, the
 * command's io.progress.
 */
export async function loadPolicy(
  model: string,
  backend: Backend,
  o: { weightFormat?: 'auto' | WeightFormat; revision?: string; progress: (line: string) => void },
): Promise<{ policy: Policy; weightFormat: WeightFormat }> {
  const weightFormat = o.weightFormat ?? 'auto';
  return {
    policy: await Policy.load(modelSource(model, { revision: o.revision }), backend, { weightFormat, ...loadProgress(o.progress, model) }),
    weightFormat: resolveWeightFormat(weightFormat, backend),
  };
}

/**
 * The policy's model files by SHA-256, for the run's modelRefs: a run file names its model by
 * content, not by a folder that exists only here. Undefined for a service that is not the engine.
 */
export function policyFiles(service: PolicyService): Record<string, string> | undefined {
  return service instanceof EnginePolicyService ? { ...service.policy.files } : undefined;
}
