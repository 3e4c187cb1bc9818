import { describe, expect, it } from 'vitest';
import { nextStepLine } from './step-progress';

const config = { preset: { batch: { size: 16 } }, schedule: { steps: 1000 } };
const at = (step: number, bufferedSamples: number, batchesWaiting = 0) => ({ step, version: step, bufferedSamples, batchesWaiting });

describe('nextStepLine', () => {
  it('says how many judged replies the next step still needs, and each step as it lands', () => {
    expect(nextStepLine(at(0, 0), config)).toBe('16 more judged replies until step 1 (0 of 16 samples in).');
    expect(nextStepLine(at(0, 15), config)).toBe('1 more judged reply until step 1 (15 of 16 samples in).');
    expect(nextStepLine(at(0, 16, 1), config)).toBe('Step 1 is training on a full batch.');
    expect(nextStepLine(at(1, 2), config)).toBe('Step 1 trained: the policy is now v1. 14 more judged replies until step 2 (2 of 16 samples in).');
    expect(nextStepLine(at(1000, 0), config)).toBe('Step 1000 trained: the policy is now v1000. All 1000 steps are trained.');
    expect(nextStepLine(at(1, 0), { ...config, schedule: { steps: 1 } })).toBe('Step 1 trained: the policy is now v1. That was its only step.');
  });

  it('says nothing where the run names no batch size (a policy on a server batches there)', () => {
    expect(nextStepLine(at(0, 0), { schedule: { steps: 8 } })).toBeNull();
    expect(nextStepLine(at(0, 0), undefined)).toBeNull();
  });
});
