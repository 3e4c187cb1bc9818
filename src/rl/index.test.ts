import { describe, it, expect } from 'vitest';
import * as rl from './index';

describe('src/rl public API', () => {
  it('exports every runtime name the rest of the lab uses', () => {
    const names = [
      'buildBinaryJudgePrompt',
      'parseBoxedScore',
      'majorityVote',
      'buildHintJudgePrompt',
      'buildStepJudgePrompt',
      'readStepJudgePrompt',
      'parseStepVote',
      'parseHintVote',
      'selectBestHint',
      'hintCandidates',
      'chooseHintByOverlap',
      'clippedOpdAdvantages',
      'topKSelectPreset',
      'appendHint',
      'opdAdvantages',
      'combinedAdvantages',
      'stepwiseRewards',
      'standardizeByStep',
      'SessionTracker',
      'SampleBuffer',
      'makePreset',
      'parsePreset',
      'ppoTokenLoss',
      'k3',
      'aggregateLoss',
      'clipFractions',
      'validateRecord',
      'RecordValidationError',
      'turnCount',
    ];
    for (const name of names) expect(typeof (rl as Record<string, unknown>)[name], name).toBe('function');
  });
});
