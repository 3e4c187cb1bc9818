/**
 * A tool-call run (as `nextstate run --example toolcall` writes it, imported into the lab)
 * opens with its accuracy chart and trajectory view instead of the personal-agent views.
 */
import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { validateRecord } from '../../rl/validate';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { defaultSetup, toRunConfig } from '../lab/setup';
import { render } from '../../../test/support/views/testing';
import { handToolRun } from '../../../test/support/views/testing-toolcall';
import RunView from './RunView.svelte';

const controller = labControllers('toolcall-view');

describe('RunView of a tool-call run', () => {
  it('shows the accuracy chart and the trajectories, not before/after', async () => {
    const lab = await controller();
    const config = { ...toRunConfig(defaultSetup({ webgpu: false })), track: 'toolcall' };
    const id = await lab.store.createRun(config, 'tool calls', 'finished');
    await lab.store.appendMany(
      id,
      handToolRun().map((r, i) => validateRecord(JSON.parse(JSON.stringify(r)), `record ${i}`)),
    );
    await lab.refreshRuns();
    await lab.open(id);
    using view = render(RunView, { lab });
    await new Promise((r) => setTimeout(r, 0));
    flushSync();
    const t = view.target;
    expect(t.querySelector('section[aria-labelledby="accuracy-heading"]')).not.toBeNull();
    expect(t.querySelector('section[aria-labelledby="trajectory-heading"]')!.textContent).toMatch(/calculator|tool/i);
    expect(t.querySelector('section[aria-labelledby="ba-heading"]')).toBeNull();
  });
});
