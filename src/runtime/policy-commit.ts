/**
 * A hub policy is read at one commit (HubSource asks which commit its revision names, once): a
 * run records that commit as models.policy.revision and modelRefs.policy.revision, so a resume,
 * or a run of the recorded config, loads the same files after the branch moved. The command
 * line and the lab record and read it with these same functions.
 */
import { COMMIT } from '../models/hub';
import type { ModelRef } from '../storage/stored-config';

/** A run config as far as the recorded commit goes: the lab's, the command line's, or one storage gave back. */
interface HubPolicyConfig {
  models: { policy: { revision?: string } };
  modelRefs?: { policy?: ModelRef };
}

/** The config with `commit` as its policy's revision, in models and in modelRefs where there is a ref; as it is without a commit. */
export function withPolicyCommit<C extends HubPolicyConfig>(config: C, commit: string | null | undefined): C {
  if (!commit) return config;
  const ref = config.modelRefs?.policy;
  return {
    ...config,
    models: { ...config.models, policy: { ...config.models.policy, revision: commit } },
    ...(ref && { modelRefs: { ...config.modelRefs, policy: { ...ref, revision: commit } } }),
  };
}

/**
 * The commit a stored config says its hub policy loaded; null for a bundled model, a folder, a
 * server's policy, a config that names a branch, or a run from before commits were recorded.
 */
export function recordedCommit(config: unknown): string | null {
  const c = config as { models?: { policy?: { revision?: unknown } }; modelRefs?: { policy?: { revision?: unknown } } } | null | undefined;
  for (const revision of [c?.modelRefs?.policy?.revision, c?.models?.policy?.revision]) {
    if (typeof revision === 'string' && COMMIT.test(revision)) return revision;
  }
  return null;
}

/** A commit as git abbreviates it: its first 7 hex digits. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}
