import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { userEvent } from 'vitest/browser';
import type { RunRecord } from '../../rl/records';
import TrajectoryView from './TrajectoryView.svelte';
import { HOSTILE, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';
import { handToolRun, hostileToolRun, QUESTION, recordedOutcomeRun, recordedToolRun } from '../../../test/support/views/testing-toolcall';

const text = (el: Element | null | undefined): string => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();

function rolloutSection(target: HTMLElement): HTMLElement {
  const el = target.querySelector<HTMLElement>('section.rollout');
  if (!el) throw new Error('no rollout shown');
  return el;
}
function stepEl(target: HTMLElement, i: number): HTMLElement {
  const el = rolloutSection(target).querySelector<HTMLElement>(`[data-step="${i}"]`);
  if (!el) throw new Error(`no step ${i}`);
  return el;
}
function radios(target: HTMLElement): HTMLInputElement[] {
  return [...target.querySelectorAll<HTMLInputElement>('[role="radiogroup"] input[type="radio"]')];
}
function select(target: HTMLElement): HTMLSelectElement {
  return target.querySelector<HTMLSelectElement>('select')!;
}
/** The reward table: row header -> cell texts. */
function table(target: HTMLElement): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const tr of target.querySelectorAll('table.rewards tbody tr')) {
    out[text(tr.querySelector('th'))] = [...tr.querySelectorAll('td')].map((td) => text(td));
  }
  return out;
}

describe('TrajectoryView', () => {
  it('shows the recorded run’s latest scored group: outputs, the PRM’s votes, r_t, no ranking, the outcome', () => {
    const records = recordedToolRun();
    using view = render(TrajectoryView, { records });
    const sel = select(view.target);
    expect([...sel.options].map((o) => o.value)).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
    expect(sel.value).toBe('g4');
    expect(sel.options[0].textContent).toBe('g0 · builtin#0 · solved 0/2');
    expect(radios(view.target).map((r) => r.value)).toEqual(['g4.r0', 'g4.r1']);
    expect(radios(view.target)[0].checked).toBe(true);
    expect(text(view.target.querySelector('.groupinfo .meta'))).toContain('integrated reward');
    expect(view.target.querySelector('.bubble.user .text')!.textContent).toMatch(/\?$/);

    const inter = records.find((r) => r.kind === 'interaction' && r.session === 'g4.r0');
    const s = stepEl(view.target, 0);
    expect(s.querySelector('pre.output')!.textContent).toBe(inter?.kind === 'interaction' ? inter.response : '');
    expect(text(s.querySelector('.stephead'))).toBe('Step 1 final answer v1');
    expect([...s.querySelectorAll('.votes .vote')].map((v) => v.textContent)).toEqual(['\u22121', '\u22121', '\u22121']);
    expect(text(s.querySelector('[data-field="reward"]'))).toBe('rt = o + mean(votes) = \u22121 + (\u22121.000) = \u22122.000');
    expect(text(s.querySelector('[data-field="advantage"]'))).toMatch(/^At = none \(every rollout’s step 1 got the same reward/);
    expect(text(s.querySelector('.answer'))).toBe('Final answer: no number in it');
    const det = s.querySelector('details')!;
    expect(det.open).toBe(false);
    expect(det.querySelectorAll('pre.nsv-raw')).toHaveLength(3);
    expect(det.textContent).toContain('\\boxed{-1}');
    expect(text(view.target.querySelector('[data-field="outcome"]'))).toBe('Outcome o = −1: the final answer is wrong or has no number.');
    expect(table(view.target)).toEqual({ 'g4.r0': ['−1', 'r −2.00 A none'], 'g4.r1': ['−1', 'r −2.00 A none'] });
  });

  it('says the judge is not asked in an outcome-only run', () => {
    using view = render(TrajectoryView, { records: recordedOutcomeRun(), group: 'g0' });
    const s = stepEl(view.target, 0);
    expect(s.querySelector('.votes')).toBeNull();
    expect(s.querySelector('details')).toBeNull();
    expect(text(s.querySelector('.score'))).toContain('outcome-only: the judge is not asked');
    expect(text(s.querySelector('[data-field="reward"]'))).toBe('rt = o = \u22121.000');
  });

  it('lays out a group’s rewards and advantages by step index and walks a rollout’s calls', () => {
    using view = render(TrajectoryView, { records: handToolRun(), group: 'g0' });
    expect(select(view.target).value).toBe('g0');
    expect(view.target.querySelector('.bubble.user .text')!.textContent).toBe(QUESTION);
    expect([...view.target.querySelectorAll('table.rewards thead th')].map((th) => text(th))).toEqual(['rollout', 'o', 'step 1', 'step 2', 'step 3']);
    expect(table(view.target)).toEqual({
      'g0.r0': ['+1', 'r +2.00 A +1.41', 'r +2.00 A +1.41', 'r +2.00 A +1.00'],
      'g0.r1': ['−1', 'r −2.00 A −0.71', 'r −1.33 A −0.82', '–'],
      'g0.r2': ['−1', 'r −2.00 A −0.71', 'r −1.00 A −0.59', 'r 0.00 A −1.00'],
    });
    expect(text(rolloutSection(view.target).querySelector('h4'))).toBe('Rollout g0.r0 answered after 3 steps · 2 tool calls, 2 returned a value');
    const s0 = stepEl(view.target, 0);
    expect(text(s0.querySelector('.stephead'))).toBe('Step 1 1 tool call v0 trained at step 1');
    expect(text(s0.querySelector('.call'))).toBe('calculator(12 * 7) → returned 84');
    expect(s0.querySelector('.call')!.getAttribute('data-ok')).toBe('true');
    const s1 = stepEl(view.target, 1);
    expect([...s1.querySelectorAll('.vote')].map((v) => v.textContent)).toEqual(['+1', '+1', 'failed']);
    expect(text(s1.querySelector('[data-field="reward"]'))).toBe('rt = o + mean(votes) = +1 + (+1.000) = +2.000');
    expect(text(s1.querySelector('[data-field="advantage"]'))).toBe('At = +1.408 (standardized among 3 rollouts’ step 2)');
    expect(text(stepEl(view.target, 2).querySelector('.answer'))).toBe('Final answer: 79 (read from “answer … N”)');
    expect(text(view.target.querySelector('[data-field="outcome"]'))).toBe('Outcome o = +1: the final answer is right.');
  });

  it('picks a rollout by click and by the arrow keys, and a group with the keyboard', async () => {
    using view = render(TrajectoryView, { records: handToolRun(), group: 'g0' });
    const [, r1, r2] = radios(view.target);
    await userEvent.click(r2);
    flushSync();
    expect(rolloutSection(view.target).getAttribute('data-session')).toBe('g0.r2');
    expect(view.target.querySelector('table.rewards tr.on')!.getAttribute('data-session')).toBe('g0.r2');
    const calls = [...stepEl(view.target, 1).querySelectorAll('.call')].map((c) => text(c));
    expect(calls[0]).toBe('calculator(12 * 7) → returned 84');
    expect(calls[1]).toMatch(/^unreadable call <tool_call>\{"name":"abacus","arguments":\{"expression":"5"\}\}<\/tool_call> → returned Error: /);
    expect(stepEl(view.target, 1).querySelectorAll('code.result')[1].textContent).toMatch(/^Error: Tool call 2: There is no tool named "abacus"/);
    expect(text(view.target.querySelector('[data-field="outcome"]'))).toBe('Outcome o = −1: no final answer before the step limit.');
    expect(text(rolloutSection(view.target).querySelector('h4'))).toContain('no final answer within 3 steps (step limit)');

    // Arrow keys move within the radio group (native behaviour).
    r2.focus();
    await userEvent.keyboard('{ArrowLeft}');
    flushSync();
    expect(r1.checked).toBe(true);
    expect(rolloutSection(view.target).getAttribute('data-session')).toBe('g0.r1');
    const bad = stepEl(view.target, 0).querySelector('.call')!;
    expect(text(bad.querySelector('.fn'))).toBe('unreadable call');
    expect(bad.getAttribute('data-ok')).toBe('false');

    // The group picker: a native select, reachable and operable from the keyboard.
    const sel = select(view.target);
    sel.focus();
    expect(document.activeElement).toBe(sel);
    await userEvent.selectOptions(sel, 'g1');
    flushSync();
    expect(sel.value).toBe('g1');
    expect(rolloutSection(view.target).getAttribute('data-session')).toBe('g1.r0');
    expect(view.target.querySelector('.bubble.user .text')!.textContent).toBe('What is 6 times 7?');
    expect(table(view.target)).toEqual({ 'g1.r0': ['−1', 'r −2.00 A none'], 'g1.r1': ['−1', 'r −2.00 A none'] });
  });

  it('follows its group prop, and a group being sampled until it is scored', () => {
    const all = handToolRun();
    const scoredG2: RunRecord[] = [
      {
        kind: 'tool_step',
        version: 1,
        ts: 6000,
        session: 'g2.r0',
        turn: 1,
        group: 'g2',
        problem: 'builtin#2',
        stepIndex: 0,
        final: false,
        toolResults: ['42'],
        outcome: 1,
        mode: 'integrated',
        votes: [1],
        raw: ['\\boxed{1}'],
        reward: 2,
        advantage: 1,
      },
      {
        kind: 'tool_step',
        version: 1,
        ts: 6000,
        session: 'g2.r0',
        turn: 2,
        group: 'g2',
        problem: 'builtin#2',
        stepIndex: 1,
        final: true,
        toolResults: [],
        outcome: 1,
        mode: 'integrated',
        votes: [1],
        raw: ['\\boxed{1}'],
        reward: 2,
        advantage: 2,
      },
      {
        kind: 'tool_step',
        version: 1,
        ts: 6000,
        session: 'g2.r1',
        turn: 1,
        group: 'g2',
        problem: 'builtin#2',
        stepIndex: 0,
        final: true,
        toolResults: [],
        outcome: 1,
        mode: 'integrated',
        votes: [-1],
        raw: ['\\boxed{-1}'],
        reward: 0,
        advantage: -1,
      },
    ];
    const props = reactive({ records: all, group: 'g0' as string | undefined });
    using view = render(TrajectoryView, props);
    expect(select(view.target).value).toBe('g0');
    props.group = 'g2';
    flushSync();
    expect(select(view.target).value).toBe('g2');
    expect([...select(view.target).options].at(-1)!.textContent).toBe('g2 · 2 rollouts, sampling');
    expect(text(view.target.querySelector('.groupinfo .meta'))).toBe('not scored yet');
    expect(text(rolloutSection(view.target).querySelector('h4'))).toContain('2 steps so far, not scored yet');
    // The tool result comes from the next step's messages before the group is scored.
    expect(text(stepEl(view.target, 0).querySelector('.call'))).toBe('calculator(6 * 7) → returned 42');
    expect(text(stepEl(view.target, 0).querySelector('.score'))).toBe('waiting for the group to finish and be scored…');
    expect(table(view.target)['g2.r0']).toEqual(['…', '…', '…']);
    expect(text(view.target.querySelector('[data-field="outcome"]'))).toMatch(/^Outcome: not known yet/);

    props.records = [...all, ...scoredG2];
    flushSync();
    expect(select(view.target).value).toBe('g2');
    expect(table(view.target)['g2.r0']).toEqual(['+1', 'r +2.00 A +1.00', 'r +2.00 A +2.00']);
    expect(text(stepEl(view.target, 1).querySelector('[data-field="advantage"]'))).toBe(
      'At = +2.000 (the only rollout that reached step 2: nothing to compare with, its reward is kept)',
    );
    expect(text(view.target.querySelector('[data-field="outcome"]'))).toBe('Outcome o = +1: the final answer is right.');
  });

  it('shows the latest scored group without a group prop, and an empty state', () => {
    using view = render(TrajectoryView, { records: handToolRun() });
    expect(select(view.target).value).toBe('g1');
    using empty = render(TrajectoryView, { records: [] });
    expect(text(empty.target.querySelector('.empty'))).toBe('No tool-call trajectories yet.');
    expect(empty.target.querySelector('select')).toBeNull();
    using unknown = render(TrajectoryView, { records: handToolRun(), group: 'nope' });
    expect(select(unknown.target).value).toBe('g1');
  });

  it('shows record text literally, never as HTML', () => {
    (window as unknown as { __pwned?: number }).__pwned = 0;
    using view = render(TrajectoryView, { records: hostileToolRun() });
    expect(view.target.querySelector('img, b, script')).toBeNull();
    expect(select(view.target).options[0].textContent).toBe(`g${HOSTILE} · p${HOSTILE} · solved 1/1`);
    expect(view.target.querySelector('.bubble.user .text')!.textContent).toBe(`question ${HOSTILE}`);
    expect(view.target.querySelector('.system pre')!.textContent).toBe(`system ${HOSTILE}`);
    expect(stepEl(view.target, 0).querySelector('pre.output')!.textContent).toContain(HOSTILE);
    expect(stepEl(view.target, 0).querySelector('code.expr')!.textContent).toBe(HOSTILE);
    // An unreadable block shows its raw text, and the tool's error message is text too.
    expect(stepEl(view.target, 1).querySelector('code.expr')!.textContent).toBe(`<tool_call>${HOSTILE}</tool_call>`);
    expect(stepEl(view.target, 1).querySelector('code.result')!.textContent).toMatch(/^Error: /);
    const raws = [...view.target.querySelectorAll('details pre.nsv-raw')].map((p) => p.textContent);
    expect(raws.some((r) => r?.includes(`${HOSTILE} \\boxed{1}`))).toBe(true);
    expect(text(view.target.querySelector('table.rewards'))).toContain('g0.r0');
    expect((window as unknown as { __pwned?: number }).__pwned).toBe(0);
  });
});
