/** A judge / user model in its own worker: loads with progress, answers, and aborts. */
import { describe, expect, inject, it } from 'vitest';
import { WorkerGenerator } from './generator-client';

const stories = inject('stories260KDir');

describe('a generator worker', () => {
  it('loads an engine model with progress, generates the documented greedy text, and aborts a request', async () => {
    const progress: string[] = [];
    const gen = await WorkerGenerator.load({ kind: 'engine', model: `${location.origin}/@fs${stories}`, backend: 'cpu' }, (p) => progress.push(p.file));
    try {
      expect(gen.kind).toBe('engine');
      expect(progress).toContain('model.safetensors');
      // A base model continues the last user message.
      const text = await gen.generate([{ role: 'user', content: 'Once upon a time' }], { temperature: 0, maxNewTokens: 12 });
      expect(', there was a little girl named Lily. She loved to play outside in the park.'.startsWith(text)).toBe(true);
      expect(text.length).toBeGreaterThan(10);

      const controller = new AbortController();
      const pending = gen.generate([{ role: 'user', content: 'Once upon a time' }], { temperature: 1, maxNewTokens: 400, signal: controller.signal });
      controller.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      // The worker still serves after an abort.
      expect(await gen.generate([{ role: 'user', content: 'The cat' }], { temperature: 0, maxNewTokens: 4 })).not.toBe('');
    } finally {
      gen.terminate();
    }
  });
});
