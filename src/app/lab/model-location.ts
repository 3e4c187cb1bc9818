/**
 * Where the page fetches a model named in a run config: a bundled model from the app's own origin
 * (under its base URL, so a deployment in a sub-folder works), anything else from the hub as named.
 */
import { bundledName, bundledPath } from '../../models/bundled';
import { pickedModelFiles } from '../../models/source';
import type { PersonalPolicyConfig } from '../../runtime/run-config';
import type { ModelLocation } from '../../workers/browser/policy-host';

export function modelUrlOrId(id: string, base?: string): string {
  const name = bundledName(id);
  // The page's base only where it is read: a hub id needs no document.
  return name ? new URL(bundledPath(name), base ?? document.baseURI).href : id;
}

/** A model on the hub (or bundled) at `revision`; absent: main. */
export function hubLocation(id: string, revision?: string): ModelLocation {
  return { kind: 'hub', id: modelUrlOrId(id), ...(revision !== undefined && { revision }) };
}

/** Where a run config's policy is fetched: at the commit the run recorded, so a resumed or repeated run reads the same files. */
export function configLocation(policy: PersonalPolicyConfig): ModelLocation {
  return hubLocation(policy.model, policy.revision);
}

/** A picked model folder, each file with its path in the folder (a worker would see only its name). */
export function filesLocation(files: readonly File[]): ModelLocation {
  return { kind: 'files', files: pickedModelFiles(files) };
}

/**
 * A model named by a path on some machine (`nextstate run --policy ./model`), which the page
 * cannot fetch: its folder must be picked. Hub ids and URLs are fetched.
 */
export function isLocalPath(id: string): boolean {
  return /^(\/|\.{1,2}(\/|\\|$)|~|[A-Za-z]:[\\/])/.test(id) || id.includes('\\');
}
