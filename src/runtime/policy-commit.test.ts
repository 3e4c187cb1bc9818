import { describe, expect, it } from 'vitest';
import { exampleConfig } from './run-config';
import { recordedCommit, shortCommit, withPolicyCommit } from './policy-commit';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

describe('the hub commit a run records for its policy', () => {
  it('goes in models.policy.revision and modelRefs.policy.revision, the rest of the config as it was', () => {
    const config = {
      ...exampleConfig('storyteller', 'karpathy/stories260K'),
      modelRefs: { policy: { id: 'karpathy/stories260K', weightFormat: 'f32' as const } },
    };
    const recorded = withPolicyCommit(config, COMMIT);
    expect(recorded).toEqual({
      ...config,
      models: { ...config.models, policy: { ...config.models.policy, revision: COMMIT } },
      modelRefs: { policy: { id: 'karpathy/stories260K', weightFormat: 'f32', revision: COMMIT } },
    });
    expect(recordedCommit(recorded)).toBe(COMMIT);
    // The config it was made from is untouched.
    expect(config.models.policy.revision).toBeUndefined();
  });

  it('leaves a config without a commit as it is: a folder, a bundled model, a server policy', () => {
    const config = exampleConfig('storyteller');
    expect(withPolicyCommit(config, null)).toBe(config);
    expect(withPolicyCommit(config, undefined)).toBe(config);
    expect(recordedCommit(config)).toBeNull();
  });

  it('reads only a full commit back, the ref first: a branch or tag is not what a run loaded', () => {
    expect(recordedCommit({ models: { policy: { revision: 'main' } } })).toBeNull();
    expect(recordedCommit({ models: { policy: { revision: 'v1.0' } }, modelRefs: { policy: { revision: COMMIT } } })).toBe(COMMIT);
    expect(recordedCommit({ models: { policy: { revision: COMMIT.toUpperCase() } } })).toBeNull();
    expect(recordedCommit(undefined)).toBeNull();
    expect(recordedCommit({ models: { policy: { revision: 7 } } })).toBeNull();
    expect(shortCommit(COMMIT)).toBe('0123456');
  });
});
