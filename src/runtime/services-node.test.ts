/**
 * Endpoint keys for headless runs: a config anyone can write names the hosts, so a key goes
 * only to the host it was set for, and over plain http only to this machine.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Backend } from '../gpu/backend';
import type { Policy } from '../gpu/policy';
import { apiKeyVariable, EndpointKeyError, endpointApiKey, nodeGenerator, type GeneratorContext } from './services-node';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

describe('apiKeyVariable', () => {
  it('names one variable per host, and no two hosts the same one', () => {
    expect(apiKeyVariable('api.openai.com')).toBe('NEXTSTATE_API_KEY_API_OPENAI_COM');
    expect(apiKeyVariable('my-vllm.lan')).toBe('NEXTSTATE_API_KEY_MY__VLLM_LAN');
    expect(apiKeyVariable('127.0.0.1')).toBe('NEXTSTATE_API_KEY_127_0_0_1');
    // Look-alikes a hostile config could name get variables of their own.
    const hosts = ['api.openai.com', 'api-openai.com', 'api.openai.com.evil.com', 'api.open-ai.com', 'apiopenai.com', 'a-.b', 'a_b.com', '[::1]', 'a..b'];
    const names = hosts.map(apiKeyVariable).filter((v) => v !== null);
    expect(new Set(names).size).toBe(names.length);
    expect(['a_b.com', '[::1]', 'a..b', 'a-.b'].map(apiKeyVariable)).toEqual([null, null, null, null]);
  });
});

describe('endpointApiKey', () => {
  const env = { NEXTSTATE_API_KEY_API_OPENAI_COM: 'sk-openai', NEXTSTATE_API_KEY_LOCALHOST: 'sk-local', NEXTSTATE_API_KEY_GPU_LAN: 'sk-lan' };

  it('gives each host its own key and other hosts none', () => {
    expect(endpointApiKey('https://api.openai.com/v1', env)).toBe('sk-openai');
    expect(endpointApiKey('https://api.openai.com:443/v1', env)).toBe('sk-openai');
    expect(endpointApiKey('https://evil.example/v1', env)).toBeUndefined();
    expect(endpointApiKey('https://api-openai.com/v1', env)).toBeUndefined();
    expect(endpointApiKey('https://api.openai.com.evil.com/v1', env)).toBeUndefined();
  });

  it('sends a key over plain http to loopback only', () => {
    expect(endpointApiKey('http://localhost:8000/v1', env)).toBe('sk-local');
    expect(endpointApiKey('http://127.0.0.1:8000/v1', { NEXTSTATE_API_KEY_127_0_0_1: 'k' })).toBe('k');
    expect(() => endpointApiKey('http://gpu.lan:8000/v1', env)).toThrow(
      new EndpointKeyError(
        'NEXTSTATE_API_KEY_GPU_LAN would go to gpu.lan:8000 over plain http, readable on the way; use an https base URL, or unset NEXTSTATE_API_KEY_GPU_LAN.',
      ),
    );
    expect(() => endpointApiKey('http://api.openai.com/v1', env)).toThrow(EndpointKeyError);
    expect(endpointApiKey('https://gpu.lan/v1', env)).toBe('sk-lan');
  });

  it('refuses the old all-hosts NEXTSTATE_API_KEY, saying which variable to set', () => {
    expect(() => endpointApiKey('https://harvest.example/v1', { NEXTSTATE_API_KEY: 'sk-everywhere' })).toThrow(
      'NEXTSTATE_API_KEY is no longer sent to every endpoint; set NEXTSTATE_API_KEY_HARVEST_EXAMPLE for harvest.example instead, and unset NEXTSTATE_API_KEY.',
    );
    expect(endpointApiKey('https://api.openai.com/v1', { ...env, NEXTSTATE_API_KEY: 'sk-everywhere' })).toBe('sk-openai');
    expect(() => endpointApiKey('not a url', env)).toThrow(/is not a URL/);
  });
});

describe('nodeGenerator for an endpoint', () => {
  it('sends the key only to the host it was set for', async () => {
    vi.stubEnv('NEXTSTATE_API_KEY_API_OPENAI_COM', 'sk-real-key');
    const sent: { url: string; auth: string | null }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      sent.push({ url, auth: new Headers(init.headers).get('authorization') });
      return Response.json({ choices: [{ message: { content: 'ok' } }] });
    });
    const ctx = { policyModel: {} as Policy, policyId: 'p', backend: {} as Backend, engines: new Map() } satisfies GeneratorContext;
    for (const baseUrl of ['https://api.openai.com/v1', 'https://collector.example/v1']) {
      const g = await nodeGenerator('judge', { kind: 'endpoint', baseUrl, model: 'm' }, ctx);
      expect(await g.generate([{ role: 'user', content: 'hi' }])).toBe('ok');
    }
    expect(sent).toEqual([
      { url: 'https://api.openai.com/v1/chat/completions', auth: 'Bearer sk-real-key' },
      { url: 'https://collector.example/v1/chat/completions', auth: null },
    ]);
  });

  it('does not hand the old all-hosts key to a host a shared config names', async () => {
    vi.stubEnv('NEXTSTATE_API_KEY', 'sk-everywhere');
    const fetch = vi.fn(async () => Response.json({ choices: [{ message: { content: 'ok' } }] }));
    vi.stubGlobal('fetch', fetch);
    const ctx = { policyModel: {} as Policy, policyId: 'p', backend: {} as Backend, engines: new Map() } satisfies GeneratorContext;
    const made = nodeGenerator('judge', { kind: 'endpoint', baseUrl: 'http://collector.example/v1', model: 'm' }, ctx);
    await expect(made).rejects.toThrow(EndpointKeyError);
    expect(fetch).not.toHaveBeenCalled();
  });
});
