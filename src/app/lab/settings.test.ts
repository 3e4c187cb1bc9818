import { afterEach, describe, expect, it, vi } from 'vitest';
import { PERSISTENCE_KEY } from './persistence';
import { apiKeySetting } from './services';
import { askPersistence, hasApiKey, loadSettings, SAVE_DELAY_MS, setApiKey, SETUP_KEY, SetupSaver, type SettingsStore } from './settings';
import { defaultSetup } from './setup';

function memoryStore(initial: Record<string, unknown> = {}): SettingsStore & { values: Map<string, unknown> } {
  const values = new Map(Object.entries(initial));
  return {
    values,
    getSetting: async <T>(key: string) => values.get(key) as T | undefined,
    setSetting: async (key, value) => void values.set(key, structuredClone(value)),
    deleteSetting: async (key) => void values.delete(key),
  };
}

afterEach(() => vi.useRealTimers());

describe('lab settings', () => {
  it('restores the remembered setup, on the CPU where WebGPU is missing', async () => {
    const saved = defaultSetup({ webgpu: true });
    saved.policy.backend = 'webgpu';
    saved.seed = 7;
    const store = memoryStore({ [SETUP_KEY]: saved, [PERSISTENCE_KEY]: { granted: true, at: 5 } });
    const gpu = await loadSettings(store, true);
    expect(gpu.setup.seed).toBe(7);
    expect(gpu.setup.policy.backend).toBe('webgpu');
    expect(gpu.persistence).toEqual({ granted: true, at: 5 });
    expect((await loadSettings(store, false)).setup.policy.backend).toBe('cpu');
  });

  it('falls back to the defaults for a setting some other app left', async () => {
    const { setup, persistence } = await loadSettings(memoryStore({ [SETUP_KEY]: 'junk', [PERSISTENCE_KEY]: { granted: 'yes' } }), false);
    expect(setup).toEqual(defaultSetup({ webgpu: false }));
    expect(persistence).toBeNull();
  });

  it('saves the form once changes stop, the last one only', async () => {
    vi.useFakeTimers();
    const store = memoryStore();
    const saver = new SetupSaver(store);
    saver.later({ ...defaultSetup(), seed: 1 });
    vi.advanceTimersByTime(SAVE_DELAY_MS - 1);
    saver.later({ ...defaultSetup(), seed: 2 });
    vi.advanceTimersByTime(SAVE_DELAY_MS - 1);
    expect(store.values.has(SETUP_KEY)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((store.values.get(SETUP_KEY) as { seed: number }).seed).toBe(2);
    saver.later({ ...defaultSetup(), seed: 3 });
    saver.cancel();
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect((store.values.get(SETUP_KEY) as { seed: number }).seed).toBe(2);
  });

  it('keeps an API key per endpoint and forgets it when cleared', async () => {
    const store = memoryStore();
    await setApiKey(store, 'https://api.example', 'sk-1');
    expect(store.values.get(apiKeySetting('https://api.example'))).toBe('sk-1');
    expect(await hasApiKey(store, 'https://api.example')).toBe(true);
    expect(await hasApiKey(store, 'https://other.example')).toBe(false);
    await setApiKey(store, 'https://api.example', '');
    expect(await hasApiKey(store, 'https://api.example')).toBe(false);
  });

  it('saves the answer to the persistence request before handing it back', async () => {
    const store = memoryStore();
    expect(
      await askPersistence(
        store,
        async () => false,
        () => 42,
      ),
    ).toEqual({ granted: false, at: 42 });
    expect(store.values.get(PERSISTENCE_KEY)).toEqual({ granted: false, at: 42 });
  });
});
