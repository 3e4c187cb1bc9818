/**
 * The lab's components with a real LabController on a real (per-test) IndexedDB in Chromium:
 * the setup form (method presets, every hyperparameter, problems in words, remembered choices),
 * the run list (rename, compare, delete), a stored run's view (summary, judged turns, token
 * view), hostile imported text shown as text, and a full disk pausing writes until retried.
 */
import { describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { userEvent } from 'vitest/browser';
import type { RunRecord } from '../../rl/records';
import { validateRecord } from '../../rl/validate';
import { StorageFullError } from '../../storage/index';
import type { LabController } from '../lab/controller.svelte';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { defaultSetup, toRunConfig, withScenario } from '../lab/setup';
import { hostileTurn, recordedRun, render } from '../../../test/support/views/testing';
import RunList from './RunList.svelte';
import RunView from './RunView.svelte';
import Setup from './Setup.svelte';

// Nothing here is slow: a stuck interaction should fail fast, not after the suite's 5 minutes.
vi.setConfig({ testTimeout: 30_000 });

const controller = labControllers('lab-test');

/** The advanced panel is a closed <details>: open it before using its fields. */
async function openAdvanced(t: HTMLElement) {
  await userEvent.click(t.querySelector('.advanced > summary')!);
  flushSync();
}

const settle = async () => {
  await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

function field(target: HTMLElement, label: string | RegExp): HTMLInputElement {
  const labels = [...target.querySelectorAll('label')].filter((l) => {
    const t = (l.querySelector('span')?.textContent ?? l.textContent ?? '').trim();
    return typeof label === 'string' ? t === label : label.test(t);
  });
  const input = labels[0]?.querySelector('input, select, textarea');
  if (!input) throw new Error(`no field labelled ${label}`);
  return input as HTMLInputElement;
}

async function seedRun(lab: LabController, label: string, records: RunRecord[]): Promise<string> {
  const id = await lab.store.createRun(toRunConfig(defaultSetup({ webgpu: false })), label, 'finished');
  await lab.store.appendMany(id, records);
  await lab.refreshRuns();
  return id;
}

describe('Setup', () => {
  it('starts from the storyteller defaults, on the CPU when there is no WebGPU', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    expect((t.querySelector('input[value="storyteller"]') as HTMLInputElement).checked).toBe(true);
    expect((t.querySelector('input[value="combined"]') as HTMLInputElement).checked).toBe(true);
    expect((t.querySelector('input[value="webgpu"]') as HTMLInputElement).disabled).toBe(true);
    expect((t.querySelector('input[value="cpu"]') as HTMLInputElement).checked).toBe(true);
    expect(t.querySelector('button[type="submit"]')!.hasAttribute('disabled')).toBe(false);
    expect(t.querySelector('.problems')).toBeNull();
  });

  it('a method brings its paper preset; bad values block the start with the reason', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    await userEvent.click(t.querySelector('input[value="binary"]')!);
    flushSync();
    await openAdvanced(t);
    expect(field(t, 'Binary votes m').valueAsNumber).toBe(3);
    expect(field(t, 'Hint votes m').valueAsNumber).toBe(0);
    expect(field(t, 'w OPD').valueAsNumber).toBe(0);
    await userEvent.fill(field(t, 'ε low'), '2');
    flushSync();
    expect(t.querySelector('.problems')!.textContent).toMatch(/epsLow/);
    expect(t.querySelector('button[type="submit"]')!.hasAttribute('disabled')).toBe(true);
    await userEvent.click(t.querySelector('.advanced button')!);
    flushSync();
    expect(t.querySelector('.problems')).toBeNull();
    expect(field(t, 'ε low').valueAsNumber).toBe(0.2);
  });

  it("OPD's hint choice: the paper's longest hint by default, top-k selection with the reference's numbers", async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    await userEvent.click(t.querySelector('input[value="opd"]')!);
    flushSync();
    await openAdvanced(t);
    const choice = field(t, 'Hint choice') as unknown as HTMLSelectElement;
    expect(choice.value).toBe('longest');
    expect(field(t, 'Clip |A OPD| (0 = none)').valueAsNumber).toBe(0);
    expect(() => field(t, 'Top-k size k')).toThrow();
    await userEvent.selectOptions(choice, 'topk-sequence');
    flushSync();
    expect(lab.setup.preset.advantage.hintSelection).toEqual({ rule: 'topk-sequence', maxCandidates: 3, k: 4, clip: 1 });
    expect(lab.setup.preset.judge.hintVotes).toBe(3);
    await userEvent.fill(field(t, 'Top-k size k'), '8');
    flushSync();
    expect(lab.setup.preset.advantage.hintSelection!.k).toBe(8);
    await userEvent.fill(field(t, 'Top-k size k'), '0');
    flushSync();
    expect(t.querySelector('.problems')!.textContent).toMatch(/hintSelection\.k/);
  });

  it("the reference's options: OPD's top-k term, the unclamped k3, the unjudged last reply; OPD clips 0.2 / 0.2", async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    await openAdvanced(t);
    const select = (label: string) => field(t, label) as unknown as HTMLSelectElement;
    // The storyteller's own OPD term (STORY_OPD_TERM) is the default; the paper's sampled token is an option.
    expect([select('OPD trains').value, select('KL estimator').value, select('Last reply').value]).toEqual(['forward-kl', 'low_var_kl', 'judged']);
    // The reverse KL takes its own settings, and the forward KL's leave.
    await userEvent.selectOptions(select('OPD trains'), 'reverse-kl');
    flushSync();
    expect(lab.setup.preset.advantage).toMatchObject({ opdTerm: 'reverse-kl', reverseKl: { k: 16, tail: true } });
    expect(lab.setup.preset.advantage.forwardKl).toBeUndefined();
    await userEvent.selectOptions(select('OPD trains'), 'topk-distill');
    await userEvent.selectOptions(select('KL estimator'), 'k3');
    await userEvent.selectOptions(select('Last reply'), 'unjudged');
    flushSync();
    expect(lab.setup.preset).toMatchObject({ advantage: { opdTerm: 'topk-distill' }, loss: { klType: 'k3' }, session: { lastTurn: 'unjudged' } });
    // The KL settings leave with their term.
    expect(lab.setup.preset.advantage.reverseKl).toBeUndefined();
    // The shuffled-hint arm of a comparison cannot read another session's hint over this reply's sets.
    expect(t.querySelector('.problems')!.textContent).toMatch(/set “OPD trains” to the sampled token/);
    await userEvent.click(t.querySelector('input[value="opd"]')!);
    flushSync();
    expect(field(t, 'ε high').valueAsNumber).toBe(0.2);
    await userEvent.click(t.querySelector('input[value="binary"]')!);
    flushSync();
    expect(() => field(t, 'OPD trains')).toThrow();
  });

  it('offers the other-child control beside a storyteller comparison, and counts its runs', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    const hint = () => t.querySelector('[data-testid="compare-hint"]')!.textContent!.trim();
    expect(hint()).toMatch(/^4 runs of this setup/);
    const box = field(t, /another child’s hints/);
    expect(box.checked).toBe(false);
    await userEvent.click(box);
    flushSync();
    expect(hint()).toMatch(/^6 runs of this setup/);
    // A student has no other child: no choice, and the usual four arms.
    lab.setup = withScenario(lab.setup, 'student');
    flushSync();
    expect(() => field(t, /another child’s hints/)).toThrow();
    expect(hint()).toMatch(/^4 runs of this setup/);
  });

  it('alpha follows the rank, and LoRA targets are chosen one by one', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    await openAdvanced(t);
    expect(field(t, 'Alpha').valueAsNumber).toBe(16);
    await userEvent.fill(field(t, 'Rank'), '4');
    flushSync();
    expect(lab.setup.preset.finetune.lora).toMatchObject({ rank: 4, alpha: 8 });
    const q = [...t.querySelectorAll<HTMLInputElement>('.targets input')][0];
    await userEvent.click(q);
    flushSync();
    expect(lab.setup.preset.finetune.lora.targets).not.toContain('q_proj');
  });

  it('a custom persona needs a model for the user; an endpoint needs a URL', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    await userEvent.click(t.querySelector('input[value="custom"]')!);
    flushSync();
    const user = field(t, 'Simulated user') as unknown as HTMLSelectElement;
    expect(user.value).toBe('policy');
    await userEvent.selectOptions(user, 'rules');
    flushSync();
    expect(t.querySelector('.problems')!.textContent).toMatch(/needs a model to play it/);
    await userEvent.selectOptions(field(t, /^Judge/) as unknown as HTMLSelectElement, 'endpoint');
    flushSync();
    await userEvent.fill(field(t, 'judge: base URL'), 'not a url');
    flushSync();
    expect(t.querySelector('.problems')!.textContent).toMatch(/judge’s endpoint a base URL/);
    // The API key field is a password field, and the key never enters the setup or the config.
    const key = field(t, /API key/);
    expect(key.type).toBe('password');
    expect(JSON.stringify(lab.setup)).not.toMatch(/sk-/);
  });

  it('remembers the choices for the next visit', async () => {
    const name = `lab-remember-${Date.now()}`;
    const lab = await controller(name);
    lab.setup = withScenario(lab.setup, 'teacher');
    lab.setup.seed = 7;
    lab.rememberSetup();
    await new Promise((r) => setTimeout(r, 600));
    const again = await controller(name);
    expect(again.setup.scenario).toBe('teacher');
    expect(again.setup.seed).toBe(7);
  });
});

describe('RunList', () => {
  it('lists runs, renames, ticks for comparison and deletes', async () => {
    const lab = await controller();
    const a = await seedRun(lab, 'first run', recordedRun());
    await seedRun(lab, 'second run', recordedRun());
    using view = render(RunList, { lab });
    const t = view.target;
    const items = () => [...t.querySelectorAll('[data-testid="run-item"]')];
    expect(items().map((i) => i.querySelector('.open')!.textContent)).toEqual(['second run', 'first run']);

    const first = items()[1] as HTMLElement;
    await userEvent.click([...first.querySelectorAll('button')].find((b) => b.textContent === 'Rename')!);
    flushSync();
    const input = first.querySelector('form.rename input') as HTMLInputElement;
    await userEvent.fill(input, 'renamed run');
    await userEvent.keyboard('{Enter}');
    await settle();
    await expect.poll(async () => (await lab.store.getRun(a))?.label).toBe('renamed run');
    await expect.poll(() => items().map((i) => i.querySelector('.open')?.textContent)).toContain('renamed run');

    await userEvent.click(items()[0].querySelector('input[type="checkbox"]')!);
    await expect.poll(() => lab.compared.length).toBe(1);

    const confirm = window.confirm;
    window.confirm = () => true;
    try {
      const del = [...(items()[0] as HTMLElement).querySelectorAll('button')].find((b) => b.textContent === 'Delete')!;
      await userEvent.click(del);
      await expect.poll(() => lab.runs.length).toBe(1);
      await settle();
      expect(items()).toHaveLength(1);
      expect(lab.compareIds).toEqual([]);
    } finally {
      window.confirm = confirm;
    }
  });
});

describe('RunList, two runs of one name', () => {
  it('tells them apart by a short id and the day and minute each started', async () => {
    const lab = await controller();
    const ids = [await seedRun(lab, 'same run', recordedRun()), await seedRun(lab, 'same run', recordedRun())];
    using view = render(RunList, { lab });
    const which = [...view.target.querySelectorAll('[data-testid="run-which"]')].map((w) => w.textContent!.trim());
    expect(which).toHaveLength(2);
    expect(new Set(which).size).toBe(2);
    for (const id of ids) expect(which.some((w) => w.startsWith(`#${id.slice(0, 6)} · `))).toBe(true);
    const created = (await lab.store.getRun(ids[0]))!.created;
    expect(which.find((w) => w.startsWith(`#${ids[0].slice(0, 6)}`))).toContain(
      new Date(created).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
    );
  });
});

describe('a run that cannot start', () => {
  it('goes back to the Setup with the reason, not to the run that was open, and keeps the label', async () => {
    const lab = await controller();
    const earlier = await seedRun(lab, 'earlier run', recordedRun());
    await lab.open(earlier);
    // A model that is not there: the test server answers its config.json with an error or a page.
    lab.setup = { ...lab.setup, label: 'will not start', policy: { ...lab.setup.policy, hubId: `${location.origin}/no-such-model`, backend: 'cpu' } };
    await lab.start();
    expect(lab.error).toMatch(/^Could not start the run: .*no-such-model/);
    expect(lab.page).toBe('setup');
    expect(lab.openRun).toBeNull();
    expect(lab.runs.map((r) => r.label)).toEqual(['earlier run']);
    // Nothing started: the label is still the form's, for the next try.
    expect(lab.setup.label).toBe('will not start');
  });
});

describe('resuming a run whose config this app cannot read', () => {
  it('lists it with Resume, and resuming says why it cannot, without loading anything', async () => {
    const lab = await controller();
    const config = { ...toRunConfig(defaultSetup({ webgpu: false })), lab: { policySource: 'files' as const } };
    const odd = { ...config, schedule: { ...config.schedule, steps: 0 } };
    const id = await lab.store.createRun(odd, 'odd run', 'interrupted');
    await lab.refreshRuns();
    using view = render(RunList, { lab });
    const resume = [...view.target.querySelectorAll('button')].find((b) => b.textContent?.startsWith('Resume'));
    expect(resume?.textContent).toBe('Resume');
    await lab.resumeRun(id, [new File(['{}'], 'config.json')]);
    expect(lab.error).toMatch(/^This run cannot be resumed: run config: schedule.steps must be a whole number from 1 to 1,000,000,000/);
    expect(lab.phase).toBe('idle');
  });
});

describe('RunView of a stored run', () => {
  it('shows the summary, the charts, the judged turns and a token view', async () => {
    const lab = await controller();
    const id = await seedRun(lab, 'recorded', recordedRun());
    await lab.open(id);
    using view = render(RunView, { lab });
    await settle();
    const t = view.target;
    expect(t.querySelector('[data-testid="run-summary"]')!.textContent!.replace(/\s+/g, ' ')).toMatch(/2 training steps · 2 evaluations · 5 conversations/);
    expect(t.querySelector('[data-testid="status-bar"]')).toBeNull();
    // Where the live status bar was: what the run came to.
    expect(t.querySelector('[data-testid="run-outcome"]')!.textContent!.replace(/\s+/g, ' ')).toMatch(
      /^finished: 2 of \d+ steps · score \d\.\d\d \(\d\.\d\d before training\) · /,
    );
    const picker = t.querySelector('[data-testid="turn-picker"]') as HTMLSelectElement;
    const options = [...picker.options].filter((o) => !o.disabled);
    expect(options.length).toBeGreaterThan(3);
    // Before any pick, the token view shows the first judged turn, not a blank area.
    expect(picker.value).toBe(options[0].value);
    expect(t.querySelector('[aria-labelledby="tokens-heading"]')!.textContent).toMatch(/Token advantages/);
    await userEvent.selectOptions(picker, options[1].value);
    flushSync();
    expect(t.querySelector('[aria-labelledby="tokens-heading"]')!.textContent).toMatch(/Token advantages/);
    // Landmarks: every view is a labelled region.
    for (const heading of ['charts-heading', 'feed-heading', 'tokens-heading', 'ba-heading']) {
      expect(t.querySelector(`section[aria-labelledby="${heading}"]`)).not.toBeNull();
    }
  });

  it('shows hostile text from an imported log as text', async () => {
    const lab = await controller();
    // Only the records the store accepts (the views' helper also has a deliberately odd one).
    const valid = hostileTurn().filter((r) => {
      try {
        validateRecord(r, 'hostile');
        return true;
      } catch {
        return false;
      }
    });
    const id = await seedRun(lab, '<b>label</b>', valid);
    await lab.open(id);
    using view = render(RunView, { lab });
    await settle();
    expect(view.target.querySelector('h2#run-heading')!.textContent).toBe('<b>label</b>');
    expect(view.target.querySelector('img, script, b')).toBeNull();
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
  });
});

describe('a record a view cannot render', () => {
  it('shows a message in its own panel; the rest of the run page stays', async () => {
    const lab = await controller();
    const id = await seedRun(lab, 'recorded', recordedRun());
    await lab.open(id);
    using view = render(RunView, { lab });
    await settle();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    // Records that bypassed today's validation (an older app's store, an edited database):
    // a time past what Date accepts made toISOString throw and blanked the page.
    const badEvent = { kind: 'runtime_event', version: 0, ts: 1e300, event: 'paused', message: 'x' } as RunRecord;
    const badTurn = { ...recordedRun().find((r) => r.kind === 'interaction')!, messages: null } as unknown as RunRecord;
    lab.records = [...lab.records, badEvent, badTurn];
    await settle();
    const t = view.target;
    const alerts = [...t.querySelectorAll('[data-testid="panel-error"]')];
    expect(alerts.length).toBeGreaterThanOrEqual(2);
    expect(t.querySelector('.run-head [data-testid="panel-error"]')!.textContent).toMatch(/This panel cannot show this run \(.*Invalid time value.*\)/);
    expect(t.querySelector('section[aria-labelledby="feed-heading"] [data-testid="panel-error"]')).not.toBeNull();
    expect(t.querySelector('h2#run-heading')!.textContent).toBe('recorded');
    expect(t.querySelector('[data-testid="run-summary"]')).not.toBeNull();
    expect(t.querySelector('section[aria-labelledby="charts-heading"] [data-testid="panel-error"]')).toBeNull();
    expect(errors).toHaveBeenCalled();
    errors.mockRestore();
  });
});

describe('a full disk', () => {
  it('pauses writes, shows the message, and retries the same write after "retry"', async () => {
    const lab = await controller();
    let calls = 0;
    const write = async () => {
      calls++;
      if (calls === 1) throw new StorageFullError('r', 'a run', 1000, [], 10, 10, new DOMException('full', 'QuotaExceededError'));
      return 'saved';
    };
    const pending = (lab as unknown as { durably: (w: () => Promise<string>) => Promise<string> }).durably(write);
    await expect.poll(() => lab.storageFull).toMatch(/Browser storage is full/);
    expect(calls).toBe(1);
    lab.retryStorage();
    await expect(pending).resolves.toBe('saved');
    expect(calls).toBe(2);
    expect(lab.storageFull).toBeNull();
  });
});
