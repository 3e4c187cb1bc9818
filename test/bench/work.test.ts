/** The bench's work model, checked against stories260K's shapes counted by hand. */
import { describe, expect, it } from 'vitest';
import { prefillMacsPerToken, trainingMacsPerToken } from '../../bench/lib/work';
import { parseModelConfig } from '../../src/models/config';
import { DEFAULT_LORA } from '../../src/gpu/lora';
import { STORIES260K_CONFIG } from '../fixtures/stories-config';

const config = parseModelConfig(STORIES260K_CONFIG);

describe('work per token (projections and LM head)', () => {
  const shape = { tokens: 32, lossTokens: 8 };
  // Per layer: q 64x64, k and v 32x64, o 64x64, gate and up 172x64, down 64x172.
  const base = 5 * (4096 + 2048 + 2048 + 4096 + 11008 + 11008 + 11008);
  // Rank 16 on all seven: 16 * (out + in) each.
  const branch = 5 * 16 * (128 + 96 + 96 + 128 + 236 + 236 + 236);

  it('prefill: every projection, and the LM head once per sequence', () => {
    expect(prefillMacsPerToken(config, shape)).toBe(base + (512 * 64) / 32);
  });

  it('a LoRA step: forward, backward without the first layer q/k/v dx, branches three times', () => {
    const head = (512 * 64 * 8) / 32;
    const firstQkv = 4096 + 2048 + 2048;
    expect(trainingMacsPerToken(config, DEFAULT_LORA, shape)).toBe(base + branch + head + (base - firstQkv) + 2 * branch + head);
    // So a rank-16 step on every projection of this model is ~3.25 prefills, not 3.
    expect(trainingMacsPerToken(config, DEFAULT_LORA, shape) / prefillMacsPerToken(config, shape)).toBeCloseTo(3.246, 3);
  });
});
