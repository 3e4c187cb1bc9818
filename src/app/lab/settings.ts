/**
 * What the lab remembers in the settings table: the setup form, endpoint API keys (kept here,
 * never in a run's config) and the browser's answer to the persistence request.
 */
import type { RunStore } from '../../storage/index';
import { PERSISTENCE_KEY, persistenceAnswer, type PersistenceAnswer } from './persistence';
import { apiKeySetting } from './services';
import { restoreSetup, type LabSetup } from './setup';

export const SETUP_KEY = 'lab.setup';
/** The form saves this long after the last change, so typing does not write on every key. */
export const SAVE_DELAY_MS = 400;

export type SettingsStore = Pick<RunStore, 'getSetting' | 'setSetting' | 'deleteSetting'>;

/** The remembered setup (checked, with a CPU policy where WebGPU is missing) and persistence answer. */
export async function loadSettings(store: SettingsStore, webgpu: boolean): Promise<{ setup: LabSetup; persistence: PersistenceAnswer | null }> {
  const setup = restoreSetup(await store.getSetting(SETUP_KEY), { webgpu });
  if (!webgpu && setup.policy.backend === 'webgpu') setup.policy.backend = 'cpu';
  return { setup, persistence: persistenceAnswer(await store.getSetting(PERSISTENCE_KEY)) };
}

/** Saves the setup form once changes stop for SAVE_DELAY_MS; a failed save only loses the memory of the form. */
export class SetupSaver {
  private timer: ReturnType<typeof setTimeout> | null = null;
  constructor(private readonly store: SettingsStore) {}

  later(setup: LabSetup): void {
    this.cancel();
    this.timer = setTimeout(() => void this.now(setup), SAVE_DELAY_MS);
  }

  async now(setup: LabSetup): Promise<void> {
    await this.store.setSetting(SETUP_KEY, setup).catch(() => {});
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Keeps (or, given an empty key, forgets) the API key of an endpoint. */
export async function setApiKey(store: SettingsStore, baseUrl: string, key: string): Promise<void> {
  if (key) await store.setSetting(apiKeySetting(baseUrl), key);
  else await store.deleteSetting(apiKeySetting(baseUrl));
}

export async function hasApiKey(store: SettingsStore, baseUrl: string): Promise<boolean> {
  return Boolean(await store.getSetting<string>(apiKeySetting(baseUrl)));
}

/** Asks for persistent storage and saves the answer first, so the System page shows it after a reload. */
export async function askPersistence(store: SettingsStore, request: () => Promise<boolean>, now = Date.now): Promise<PersistenceAnswer> {
  const answer: PersistenceAnswer = { granted: await request(), at: now() };
  await store.setSetting(PERSISTENCE_KEY, answer).catch(() => {});
  return answer;
}
