import { describe, expect, it } from 'vitest';
import { parseStoredConfig } from '../../storage/index';
import { defaultSetup, toRunConfig } from './setup';
import { changedFiles, checkSamePolicy, PolicyChangedError, withPolicyFiles } from './model-files';
import { persistenceAnswer } from './persistence';

const hashes = { 'config.json': 'a'.repeat(64), 'model.safetensors': 'b'.repeat(64) };

describe('the policy named by content', () => {
  it('puts the loaded files into modelRefs.policy, a config storage accepts as it is', () => {
    const config = toRunConfig(defaultSetup(), 'stories260K');
    const named = withPolicyFiles(config, hashes);
    expect(named.modelRefs.policy).toEqual({ id: 'stories260K', files: hashes, weightFormat: 'f16' });
    expect(parseStoredConfig(named).modelRefs).toEqual({ policy: { id: 'stories260K', files: hashes, weightFormat: 'f16' } });
    // The form's config is not changed under it.
    expect(config.modelRefs.policy).toEqual({ id: 'stories260K', weightFormat: 'f16' });
  });

  it('refuses to resume on weights other than the run started from, naming the files', () => {
    const config = withPolicyFiles(toRunConfig(defaultSetup(), 'stories260K'), hashes);
    expect(() => checkSamePolicy(config, hashes)).not.toThrow();
    // Another file loaded besides them (a newer app hashes more) is no change.
    expect(() => checkSamePolicy(config, { ...hashes, 'extra.json': 'c'.repeat(64) })).not.toThrow();
    const other = { ...hashes, 'model.safetensors': 'c'.repeat(64) };
    const err = (() => {
      try {
        checkSamePolicy(config, other);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(PolicyChangedError);
    expect((err as Error).message).toBe(
      "The policy's model.safetensors differs (by SHA-256) from what this run started with, so its saved adapter belongs to other weights. " +
        'Pick the same model folder, or the model as it was, to resume; or start a new run.',
    );
    expect(changedFiles(hashes, {})).toEqual(['config.json', 'model.safetensors']);
  });

  it('resumes runs from before hashes were recorded without a check', () => {
    expect(() => checkSamePolicy(toRunConfig(defaultSetup(), 'stories260K'), hashes)).not.toThrow();
  });
});

describe('the remembered persist() answer', () => {
  it('is read back only when it has the shape the lab saved', () => {
    expect(persistenceAnswer({ granted: true, at: 5 })).toEqual({ granted: true, at: 5 });
    for (const bad of [undefined, null, 'yes', { granted: 'true', at: 5 }, { granted: false, at: 1e300 }, { granted: false }]) {
      expect(persistenceAnswer(bad)).toBeNull();
    }
  });
});
