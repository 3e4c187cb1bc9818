/**
 * The policy worker's host (the worker itself is comlink around it) reading a hub model from a
 * local mock hub: the commit it loaded goes back to the page for the run's config, a load at a
 * recorded commit reads that commit after the branch moved, and a commit the hub does not have
 * is refused in one line saying what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStoriesHub, STORIES_REPO, type MockHub } from '../../../test/support/gpu/mock-hub';
import { makePreset } from '../../rl/presets';
import { PolicyHost, type PolicyLoadRequest } from './policy-host';
import { pinnedLocation, RecordedCommitError, type ModelLocation } from './policy-source';

const REPO = STORIES_REPO;
let hub: MockHub;
let first = '';
let second = '';

beforeAll(async () => {
  ({
    hub,
    commits: [first, second],
  } = await startStoriesHub());
});
afterAll(() => hub.close());

const request = (location: ModelLocation): PolicyLoadRequest => ({
  location,
  backend: 'cpu',
  preset: makePreset('combined', { finetune: { lora: { rank: 2 } } }),
  seed: 1,
  temperature: 1,
});

/** Loads in a fresh host, and the files it asked the hub for meanwhile. */
async function load(location: ModelLocation) {
  const from = hub.requests.length;
  const info = await new PolicyHost({ endpoint: hub.url, cacheStorage: null }).load(request(location));
  return { info, resolved: hub.requests.slice(from).filter((r) => r.host === 'hub' && r.path.includes('/resolve/')) };
}

describe('the policy worker at a hub commit', () => {
  it('reports the commit main named, and a load at that commit reads it after main moved', async () => {
    const atMain = await load({ kind: 'hub', id: REPO });
    expect(atMain.info.commit).toBe(first);
    expect(atMain.resolved.every((r) => r.path.includes(`/resolve/${first}/`))).toBe(true);

    hub.setRef(REPO, 'main', second);
    const from = hub.requests.length;
    const again = await load({ kind: 'hub', id: REPO, revision: first });
    expect(again.info.commit).toBe(first);
    expect(again.info.files).toEqual(atMain.info.files);
    expect(again.resolved.length).toBeGreaterThan(0);
    expect(again.resolved.every((r) => r.path.includes(`/resolve/${first}/`))).toBe(true);
    // A commit is not asked of the hub's API: it names its files itself.
    expect(hub.requests.slice(from).some((r) => r.path.startsWith('/api/'))).toBe(false);
    hub.setRef(REPO, 'main', first);
  });

  it('refuses a recorded commit the hub does not have, in one line that says what to do', async () => {
    const gone = 'f'.repeat(40);
    const failed = await load({ kind: 'hub', id: REPO, revision: gone }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RecordedCommitError);
    const message = (failed as Error).message;
    expect(message).toMatch(
      /^karpathy\/stories260K at commit fffffff, the one this run recorded, could not be loaded: .*HTTP 404.* start a new run from Setup\.$/,
    );
    expect(message).not.toContain('\n');
  });

  it('pins only a hub location that was read at a commit', () => {
    expect(pinnedLocation({ kind: 'hub', id: REPO }, first)).toEqual({ kind: 'hub', id: REPO, revision: first });
    expect(pinnedLocation({ kind: 'hub', id: 'http://localhost/models/demo' }, null)).toEqual({ kind: 'hub', id: 'http://localhost/models/demo' });
    expect(pinnedLocation({ kind: 'files', files: [] }, null)).toEqual({ kind: 'files', files: [] });
  });
});
