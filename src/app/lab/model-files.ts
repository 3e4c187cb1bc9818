/**
 * A run names its policy by content: the SHA-256 of config.json and the weights it loaded go
 * into the run config's modelRefs (and so into its run file), and a resumed run must load the
 * same bytes. A hub id can move to new weights and a picked folder can be another model under
 * the same name; training on from an adapter made for other weights would give a run whose
 * log describes a model it never had.
 */
import type { ModelRef } from '../../storage/index';

type Hashes = Readonly<Record<string, string>>;

/** A run config as far as this module reads it: the lab's own, or one storage gave back. */
interface NamedPolicy {
  modelRefs?: { policy?: ModelRef };
}

/** The config with the policy's file hashes in modelRefs.policy (its id kept). */
export function withPolicyFiles<C extends NamedPolicy>(config: C, files: Hashes): C {
  const policy = config.modelRefs?.policy;
  if (!policy) return config;
  return { ...config, modelRefs: { ...config.modelRefs, policy: { ...policy, files: { ...files } } } };
}

/** Files the run recorded whose hash the loaded model does not repeat, by name. */
export function changedFiles(recorded: Hashes | undefined, loaded: Hashes): string[] {
  if (!recorded) return [];
  return Object.entries(recorded)
    .filter(([name, hex]) => loaded[name] !== hex)
    .map(([name]) => name);
}

/** The policy loaded for a resume is not the model the run was trained from. */
export class PolicyChangedError extends Error {
  constructor(readonly files: readonly string[]) {
    super(
      `The policy's ${files.join(', ')} ${files.length === 1 ? 'differs' : 'differ'} (by SHA-256) from what this run started with, ` +
        'so its saved adapter belongs to other weights. Pick the same model folder, or the model as it was, to resume; or start a new run.',
    );
    this.name = 'PolicyChangedError';
  }
}

/** @throws PolicyChangedError when the run recorded hashes the loaded model does not match */
export function checkSamePolicy(config: NamedPolicy, loaded: Hashes): void {
  const changed = changedFiles(config.modelRefs?.policy?.files, loaded);
  if (changed.length) throw new PolicyChangedError(changed);
}
