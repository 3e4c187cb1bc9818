import { describe, expect, it } from 'vitest';
import { userEvent } from 'vitest/browser';
import { HOSTILE, render } from '../../../test/support/views/testing';
import { ANSWER, HOMEWORK, workspaceRun } from '../../../test/support/views/testing-workspace';
import ConversationFeed from './ConversationFeed.svelte';
import WorkspaceFiles from './WorkspaceFiles.svelte';

describe('the homework workspace in the run view', () => {
  it('shows each file as the run left it, and every change that led there', async () => {
    using view = render(WorkspaceFiles, { records: workspaceRun() });
    const file = view.target.querySelector<HTMLElement>('[data-workspace="s0"] [data-path="homework/0.txt"]')!;
    expect(file.querySelector('.path')!.textContent).toMatch(/homework\/0\.txt\s+2 changes/);
    expect(file.querySelector('pre.content')!.textContent).toBe(HOMEWORK + ANSWER);
    const history = file.querySelector('details')!;
    expect(history.open).toBe(false);
    await userEvent.click(history.querySelector('summary')!);
    expect([...history.querySelectorAll('li .op')].map((o) => o.textContent)).toEqual(['written by the scenario, for s0', 'appended to by s0, turn 3 (v0)']);
    expect([...history.querySelectorAll('li pre')].map((p) => p.textContent)).toEqual([HOMEWORK, HOMEWORK + ANSWER]);
  });

  it('shows tool calls and results in the conversation feed, and what the policy wrote only as text', () => {
    using feed = render(ConversationFeed, { records: workspaceRun(HOSTILE) });
    const turn = (n: number) => feed.target.querySelector<HTMLElement>(`[data-session="s0"] [data-turn="${n}"]`)!;
    expect(turn(1).querySelector('.call')!.textContent).toMatch(/tool call\s+read\s+\{"path":"homework\/0\.txt"\}/);
    expect(turn(1).querySelector('.assistant p.text')).toBeNull();
    expect(turn(2).querySelector('.bubble.tool .who')!.textContent).toBe('tool result');
    expect(turn(2).querySelector('.bubble.tool pre')!.textContent).toBe(HOMEWORK);
    expect(turn(3).querySelector('.call code')!.textContent).toBe('append');
    using files = render(WorkspaceFiles, { records: workspaceRun(HOSTILE) });
    for (const target of [feed.target, files.target]) {
      expect(target.textContent).toContain(HOSTILE);
      expect(target.querySelector('img, script, b')).toBeNull();
    }
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
  });
});
