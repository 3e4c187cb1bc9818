/**
 * The Setup form with the app's own stylesheet, as its parts come and go: every field that is in
 * the page is laid out. Chromium (156) once dropped a grid's fields from the layout when the grid
 * was its own size container and a field was put in among them: the Run fields vanished after
 * choosing a policy on a server, and stayed gone after choosing the hub again.
 */
import '../app.css';
import { flushSync } from 'svelte';
import { expect, it } from 'vitest';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import Setup from './Setup.svelte';

const controller = labControllers('setup-layout-test');

it('keeps every field laid out as the policy moves to a server and back, and as the track and scenario change', async () => {
  const lab = await controller();
  using view = render(Setup, { lab });
  view.target.id = 'app';
  flushSync();
  const t = view.target;
  /** Fields in the page that have no box on screen. */
  const unplaced = () => [...t.querySelectorAll('.grid > .field')].filter((f) => f.getClientRects().length === 0).map((f) => f.textContent!.trim());
  const choose = async (name: string) => {
    [...t.querySelectorAll('label')]
      .find((l) => l.textContent!.trim().startsWith(name))!
      .querySelector('input')!
      .click();
    flushSync();
    await new Promise((r) => requestAnimationFrame(r));
  };
  const fieldNames = () => [...t.querySelectorAll('.grid > .field > span')].map((s) => s.textContent);

  expect(fieldNames()).toContain('Training steps');
  for (const step of [
    'Policy on a server',
    'Hugging Face hub',
    'A folder on this computer',
    'Hugging Face hub',
    'General agent: tool calls',
    'Personal agent',
    'Student',
    'Storyteller',
  ]) {
    await choose(step);
    expect(unplaced(), `after choosing “${step}”`).toEqual([]);
  }
  expect(fieldNames()).toContain('Training steps');
});
