/**
 * What the page says about trust in stored data, with a real LabController on a real (per-test)
 * IndexedDB in Chromium: an imported file's integrity (verified, unverified, refused) and the
 * browser's answer to persist(), saved before the System page shows it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { exportRun } from '../../storage/index';
import { gunzip, gzip } from '../../../test/support/storage/fixtures';
import { webGpuHelp, type ProbeResult } from '../gpu-adapter';
import { LabController } from '../lab/controller.svelte';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { PERSISTENCE_KEY } from '../lab/persistence';
import { defaultSetup, toRunConfig } from '../lab/setup';
import { recordedRun, render } from '../../../test/support/views/testing';
import RunView from './RunView.svelte';
import SystemPage from './SystemPage.svelte';

vi.setConfig({ testTimeout: 30_000 });

const controller = labControllers('integrity-test');
afterEach(() => void vi.restoreAllMocks());

const settle = async () => {
  await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

/** A run file of the recorded run, as this app writes it, and its lines. */
async function exported(lab: LabController): Promise<string[]> {
  const id = await lab.store.createRun(toRunConfig(defaultSetup({ webgpu: false })), 'shared run', 'finished');
  await lab.store.appendMany(id, recordedRun());
  return (await gunzip(await exportRun(lab.store, id))).split('\n');
}

const file = async (lines: string[]) => new File([(await gzip(lines.join('\n'))) as Uint8Array<ArrayBuffer>], 'shared.nsrun');

describe('importing a run file', () => {
  it('opens a file whose hashes match as read-only and says they match', async () => {
    const lab = await controller();
    const lines = await exported(lab);
    const target = await controller();
    await target.importFile(await file(lines));
    expect(target.error).toBeNull();
    expect(target.openRun).toMatchObject({ label: 'shared run', readOnly: true, integrity: 'verified' });
    expect(target.announcement).toBe('Imported shared.nsrun as a read-only run; hashes match: no accidental damage.');
    using view = render(RunView, { lab: target });
    await settle();
    expect(view.target.querySelector('[data-testid="read-only"]')).not.toBeNull();
    expect(view.target.querySelector('[data-testid="unverified"]')).toBeNull();
    // What matching hashes show, and that they are no signature.
    const badge = view.target.querySelector('[data-testid="hashes-match"]')!;
    expect(badge.textContent).toBe('hashes match');
    expect(badge.getAttribute('title')).toMatch(/no accidental damage.*not a signature/);
    expect(view.target.textContent).not.toMatch(/verified/i);

    // The same file again: the copy made the first time opens, and no second row appears.
    const first = target.openRun!.id;
    expect(await target.importFile(await file(lines))).toEqual({ id: first, copied: false });
    expect(target.runs).toHaveLength(1);
    expect(target.openRun?.id).toBe(first);
    expect(target.announcement).toBe('shared.nsrun was imported before: this is that copy, “shared run”.');
  });

  it('marks a file from before the hashes unverified, on the page and in the announcement', async () => {
    const lab = await controller();
    const [header, ...body] = await exported(lab);
    const { integrity: _integrity, ...old } = JSON.parse(header);
    const target = await controller();
    await target.importFile(await file([JSON.stringify(old), ...body]));
    expect(target.error).toBeNull();
    expect(target.openRun?.integrity).toBe('unverified');
    expect(target.announcement).toMatch(/^Imported shared\.nsrun as a read-only run, unverified: the file carries no integrity hashes/);
    using view = render(RunView, { lab: target });
    await settle();
    const badge = view.target.querySelector('[data-testid="unverified"]')!;
    expect(badge.textContent).toBe('unverified');
    expect(badge.getAttribute('title')).toMatch(/damage to it could not be detected/);
  });

  it('refuses a file edited after export, saying why, and keeps nothing of it', async () => {
    const lab = await controller();
    const lines = await exported(lab);
    // Two records swapped: every line well formed, the count right, the order not.
    const edited = [lines[0], lines[2], lines[1], ...lines.slice(3)];
    const target = await controller();
    await target.importFile(await file(edited));
    expect(target.error).toBe(
      "Could not import shared.nsrun: This run file's records do not match the SHA-256 it carries: it was damaged or edited after export. Get an intact copy, or export the run again from the app that made it.",
    );
    expect(await target.store.db.runs.count()).toBe(0);
    expect(await target.store.db.records.count()).toBe(0);
  });
});

describe('persistent storage', () => {
  const probe = (): Promise<ProbeResult> => Promise.resolve({ kind: 'no-webgpu', reason: 'test', help: webGpuHelp(navigator.userAgent) });

  it('keeps the browser\u2019s answer in the database before the System page shows it', async () => {
    const lab = await controller();
    vi.spyOn(navigator.storage, 'persist').mockResolvedValue(false);
    const saved = vi.spyOn(lab.store, 'setSetting');
    await (lab as unknown as { askPersistence(): Promise<void> }).askPersistence();
    expect(saved).toHaveBeenCalledWith(PERSISTENCE_KEY, lab.persistence);
    expect(lab.persistence).toMatchObject({ granted: false });
    using view = render(SystemPage, { probe, persistence: lab.persistence });
    expect(view.target.querySelector('[data-testid="persistence"]')!.textContent).toMatch(
      /asked when the last run started \(.+\):\s*refused\. The browser may evict/,
    );

    // A reload reads it back.
    const again = new LabController(lab.store);
    await again.init({ webgpu: false });
    expect(again.persistence).toEqual(lab.persistence);
    again.dispose();
  });

  it('says when nothing was asked yet, and when it was granted', async () => {
    using none = render(SystemPage, { probe, persistence: null });
    expect(none.target.querySelector('[data-testid="persistence"]')!.textContent).toMatch(
      /not asked yet; the lab asks the browser \(navigator\.storage\.persist\(\)\) when a run starts/,
    );
    using granted = render(SystemPage, { probe, persistence: { granted: true, at: 1_700_000_000_000 } });
    expect(granted.target.querySelector('[data-testid="persistence"]')!.textContent).toMatch(
      /granted\s*, so the browser keeps the runs under storage pressure/,
    );
  });
});
