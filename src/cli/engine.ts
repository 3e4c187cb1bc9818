/** What every engine subcommand needs: a backend by name and a policy from a folder or hub id. */
import type { Backend } from '../gpu/backend';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { modelSource } from '../gpu/source-node';
import { EnginePolicyService, type PolicyService } from '../runtime/policy-service';
import { UsageError } from './args';

export const BACKEND_OPTION = { backend: { type: 'string' as const, default: 'cpu' } };

export async function createBackend(kind: unknown): Promise<Backend> {
  if (kind === 'cpu') return new CpuBackend();
  if (kind === 'webgpu') {
    const { createNodeWebGPUBackend } = await import('../gpu/webgpu/node');
    return createNodeWebGPUBackend();
  }
  throw new UsageError(`--backend must be cpu or webgpu, got ${JSON.stringify(kind)}`);
}

export async function loadPolicy(model: string, backend: Backend): Promise<Policy> {
  return Policy.load(modelSource(model), backend);
}

/**
 * The policy's model files by SHA-256, for the run's modelRefs: a run file names its model by
 * content, not by a folder that exists only here. Undefined for a service that is not the engine.
 */
export function policyFiles(service: PolicyService): Record<string, string> | undefined {
  return service instanceof EnginePolicyService ? { ...service.policy.files } : undefined;
}
