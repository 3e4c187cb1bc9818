import { afterEach, describe, expect, it, vi } from 'vitest';
import { GenerationBatcher } from './batcher';
import type { PolicyReply, PolicyRequest, PolicyService } from './policy-service';

function fakePolicy(batches: number[]): PolicyService {
  return {
    generate: async (requests: PolicyRequest[]) => {
      batches.push(requests.length);
      return requests.map(() => ({}) as PolicyReply);
    },
  } as unknown as PolicyService;
}

const request = (temperature: number) => ({ messages: [], maxNewTokens: 1, sampling: { temperature, topP: 1, topK: 0 }, seed: 0 }) as unknown as PolicyRequest;

afterEach(() => void vi.useRealTimers());

describe('the generation batcher', () => {
  it('merges the requests of one event-loop turn, one batch per sampling setting, without waiting on a timer', async () => {
    // Frozen timers: a batch that waited on setTimeout would never start. Which requests share a
    // batch must not depend on wall-clock time, or a run would not repeat for its seed.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'Date'] });
    const batches: number[] = [];
    const batcher = new GenerationBatcher(fakePolicy(batches), 3);
    const replies = Promise.all([1, 1, 0.5, 1, 1].map((t) => batcher.request(request(t))));
    await replies;
    expect(batches).toEqual([3, 1, 1]);
  });
});
