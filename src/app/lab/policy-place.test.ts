import { describe, expect, it } from 'vitest';
import { policyServerOf, remotePolicyBadge } from './policy-place';

describe('where a stored run’s policy ran', () => {
  it('names the server of a remote policy, and nothing for a policy in the lab or a config it cannot read', () => {
    const server = policyServerOf({ models: { policy: { kind: 'server', url: 'http://127.0.0.1:30000/v1', model: 'Qwen3-0.6B' } } });
    expect(server).toEqual({ url: 'http://127.0.0.1:30000/v1', model: 'Qwen3-0.6B' });
    expect(remotePolicyBadge(server!)).toEqual({
      text: 'remote policy',
      title: "Qwen3-0.6B on the server at http://127.0.0.1:30000/v1, which judged and trained it; its adapter is on the server (nextstate serve's run file)",
    });
    expect(policyServerOf({ models: { policy: { model: 'Qwen/Qwen3-0.6B', backend: 'cpu' } } })).toBeNull();
    expect(policyServerOf({ models: { policy: { kind: 'server', url: 3 } } })).toBeNull();
    expect(policyServerOf(undefined)).toBeNull();
  });
});
