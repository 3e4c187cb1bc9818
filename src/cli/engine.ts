/** What every engine subcommand needs: a backend by name and a policy from a folder or hub id. */
import { existsSync } from 'node:fs';
import type { Backend } from '../gpu/backend';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { HubSource, type ModelSource } from '../gpu/source';
import { DirSource } from '../gpu/source-node';
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

/** A path that exists is a folder; anything else is a hub id or URL. */
export function modelSource(model: string): ModelSource {
  return existsSync(model) ? new DirSource(model) : new HubSource(model, { cacheStorage: null });
}

export async function loadPolicy(model: string, backend: Backend): Promise<Policy> {
  return Policy.load(modelSource(model), backend);
}
