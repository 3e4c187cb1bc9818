import { describe, expect, it } from 'vitest';
import { openClawEntry, servedModelId } from './openclaw-entry';

describe('the OpenClaw provider entry', () => {
  it('points a provider at the server and makes its model the default', () => {
    const entry = JSON.parse(openClawEntry({ server: 'http://127.0.0.1:4000', modelId: 'tiny-qwen3', apiKey: 'sk-1', maxTokens: 64, provider: 'lab' }));
    expect(entry.models.providers.lab).toMatchObject({
      baseUrl: 'http://127.0.0.1:4000/v1',
      apiKey: 'sk-1',
      api: 'openai-completions',
      models: [{ id: 'tiny-qwen3', input: ['text'], contextWindow: 32768, maxTokens: 64 }],
    });
    expect(entry.agents.defaults.model.primary).toBe('lab/tiny-qwen3');
    // OpenClaw wants a key even for a server that takes none.
    expect(JSON.parse(openClawEntry({ server: 'http://127.0.0.1:30000', modelId: 'm', maxTokens: 8, apiKey: '' })).models.providers.nextstate.apiKey).toBe(
      'KEY',
    );
  });

  it('names the model as nextstate serve does: the last part of --model', () => {
    expect(servedModelId('Qwen/Qwen3-0.6B')).toBe('Qwen3-0.6B');
    expect(servedModelId('/models/tiny-qwen3/')).toBe('tiny-qwen3');
    expect(servedModelId('C:\\models\\tiny')).toBe('tiny');
  });
});
