import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { userEvent } from 'vitest/browser';
import type { RunRecord } from '../../rl/records';
import ConversationFeed from './ConversationFeed.svelte';
import { HOSTILE, hostileTurn, recordedRun, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';

function turnEl(target: HTMLElement, session: string, turn: number): HTMLElement {
  const el = target.querySelector<HTMLElement>(`[data-session="${session}"] [data-turn="${turn}"]`);
  if (!el) throw new Error(`no turn ${session}/${turn}`);
  return el;
}

describe('ConversationFeed', () => {
  const records = recordedRun();

  it('shows each session’s turns with votes, final score, hint and version', () => {
    using view = render(ConversationFeed, { records });
    const sessions = [...view.target.querySelectorAll('[data-session]')].map((s) => s.getAttribute('data-session'));
    expect(sessions).toEqual(['s0', 's1', 's2', 's3', 's4']);
    expect(view.target.querySelectorAll('[data-session="s0"] [data-turn]')).toHaveLength(4);

    const t = turnEl(view.target, 's0', 1);
    expect(t.querySelector('.user .text')!.textContent).toBe('Once upon a time, there was a little dog.');
    expect(t.querySelector('.assistant .text')!.textContent).toMatch(/^The dog liked to eat fud\./);
    expect(t.querySelector('.ver')!.textContent).toBe('v0');
    expect([...t.querySelectorAll('.vote')].map((v) => v.textContent)).toEqual(['\u22121', 'hint']);
    expect(t.querySelector('.final')!.textContent!.replace(/\s+/g, '')).toBe('rfinal=\u22121');
    expect(t.querySelector('.status')!.textContent!.trim()).toBe('hint accepted');
    expect(t.querySelector('.hinttext')!.textContent).toContain('The child wants a bedtime story');
    // Raw judge replies sit in closed <details>.
    const det = t.querySelectorAll('details');
    expect(det).toHaveLength(2);
    expect(det[0].open).toBe(false);
    expect(det[0].textContent).toContain('\\boxed{-1}');
    expect(t.textContent).toContain('trained at step 1');

    const rejected = turnEl(view.target, 's1', 1);
    expect(rejected.querySelector('.status')!.textContent!.trim()).toBe('no usable hint');
    expect(rejected.querySelector('.hinttext')).toBeNull();
    // The last turn of a session has no next state yet: no judges, no button.
    expect(turnEl(view.target, 's0', 4).querySelector('button')).toBeNull();
    expect(view.target.querySelector('[data-session="s1"] h4')!.textContent).toContain('ended (explicit)');
  });

  it('greys side turns', () => {
    const side: RunRecord = {
      kind: 'interaction',
      version: 0,
      ts: 1,
      session: 's0',
      turn: 9,
      turnType: 'side',
      messages: [{ role: 'user', content: 'update memory' }],
      response: 'noted',
      tokenIds: [1],
      logprobs: [-1],
      startedAt: 0,
      finishedAt: 1,
    };
    using view = render(ConversationFeed, { records: [...records, side] });
    const t = turnEl(view.target, 's0', 9);
    expect(t.classList.contains('side')).toBe(true);
    expect(Number(getComputedStyle(t).opacity)).toBeLessThan(1);
    expect(t.textContent).toContain('side turn, not trained');
  });

  it("marks the turns a resume left behind as the interrupted step's, and only those", () => {
    const marker: RunRecord = {
      kind: 'runtime_event',
      version: 1,
      ts: 2,
      step: 1,
      event: 'run_resumed',
      message: 'resumed at step 1 (v1) with 0 buffered samples; 1 turn of the interrupted step 2 kept, marked interrupted, never trained (1 session)',
      interrupted: [{ session: 's0', turns: [4] }],
    };
    using view = render(ConversationFeed, { records: [...records, marker] });
    const marked = [...view.target.querySelectorAll('[data-testid="interrupted-turn"]')];
    expect(marked).toHaveLength(1);
    expect(turnEl(view.target, 's0', 4).querySelector('[data-testid="interrupted-turn"]')!.textContent!.replace(/\s+/g, ' ').trim()).toBe(
      'interrupted a stop cut off step 2 before this turn reached the buffer; the resumed run went on without it, so it was never trained',
    );
  });

  it('selects a judged turn by click and by keyboard', async () => {
    const picked: { session: string; turn: number }[] = [];
    const props = reactive({
      records,
      selected: null as { session: string; turn: number } | null,
      onselect: (t: { session: string; turn: number }) => {
        picked.push(t);
        props.selected = t;
      },
    });
    using view = render(ConversationFeed, props);
    const btn = turnEl(view.target, 's2', 1).querySelector<HTMLButtonElement>('button.inspect')!;
    expect(btn.getAttribute('aria-pressed')).toBe('false');
    await userEvent.click(btn);
    flushSync();
    expect(picked).toEqual([{ session: 's2', turn: 1 }]);
    expect(btn.getAttribute('aria-pressed')).toBe('true');
    expect(turnEl(view.target, 's2', 1).classList.contains('selected')).toBe(true);

    const other = turnEl(view.target, 's3', 2).querySelector<HTMLButtonElement>('button.inspect')!;
    other.focus();
    await userEvent.keyboard('{Enter}');
    flushSync();
    expect(picked.at(-1)).toEqual({ session: 's3', turn: 2 });
    expect(btn.getAttribute('aria-pressed')).toBe('false');
  });

  it('shows record text literally, never as HTML', () => {
    (window as unknown as { __pwned?: number }).__pwned = 0;
    using view = render(ConversationFeed, { records: hostileTurn() });
    expect(view.target.querySelector('img, b, script')).toBeNull();
    const t = turnEl(view.target, 'h', 1);
    expect(t.querySelector('.user .text')!.textContent).toBe(`question ${HOSTILE}`);
    expect(t.querySelector('.assistant .text')!.textContent).toBe(`${HOSTILE} end`);
    expect(t.querySelector('.hinttext')!.textContent).toContain(HOSTILE);
    expect(t.querySelector('details pre')!.textContent).toContain(HOSTILE);
    expect((window as unknown as { __pwned?: number }).__pwned).toBe(0);
  });

  it('lists the candidates of a top-k hint selection, their overlap with the student and the chosen one', () => {
    const withSelection = records.map((r): RunRecord =>
      r.kind === 'judge_result' && r.judge === 'hint' && r.session === 's0' && r.turn === 1
        ? {
            ...r,
            selection: {
              rule: 'topk-sequence',
              k: 4,
              clip: 1,
              tokens: 5,
              winner: 1,
              candidates: [
                { hint: 'Make it shorter.', overlap: 8, tokensWon: 0 },
                { hint: r.hint!, overlap: 15, tokensWon: 5 },
              ],
            },
          }
        : r,
    );
    using view = render(ConversationFeed, { records: withSelection });
    const t = turnEl(view.target, 's0', 1);
    const items = [...t.querySelectorAll('.candidates li')];
    expect(items).toHaveLength(2);
    expect(items[0].textContent).toContain('1.60 / 4');
    expect(items[0].textContent).toContain('Make it shorter.');
    expect(items[0].classList.contains('winner')).toBe(false);
    expect(items[1].classList.contains('winner')).toBe(true);
    expect(items[1].textContent).toContain('3.00 / 4');
    expect(items[1].textContent).toContain('chosen');
    expect(t.querySelector('.cand-h')!.textContent).toMatch(/2 candidates, shortest first; top-4 overlap.*clipped to ±1/s);
    // A run without top-k selection shows no candidate list.
    using plain = render(ConversationFeed, { records });
    expect(turnEl(plain.target, 's0', 1).querySelector('.candidates')).toBeNull();
  });
});
