import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { userEvent } from 'vitest/browser';
import type { RunRecord } from '../../rl/records';
import TokenView from './TokenView.svelte';
import { tokenTable } from './derive-tokens';
import { HOSTILE, hostileTurn, recordedRun, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';

const EPS = { epsLow: 0.2, epsHigh: 0.28 };

function tokens(target: HTMLElement): HTMLButtonElement[] {
  return [...target.querySelectorAll<HTMLButtonElement>('button.tok')];
}
function details(target: HTMLElement): HTMLElement {
  return target.querySelector<HTMLElement>('[data-testid="token-details"]')!;
}
function field(target: HTMLElement, name: string): string {
  return details(target).querySelector(`[data-field="${name}"]`)?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
}
function pick(target: HTMLElement, kind: 'opd' | 'binary' | 'combined'): void {
  target.querySelector<HTMLInputElement>(`input[type="radio"][value="${kind}"]`)!.click();
  flushSync();
}
const num = (s: string) => s.replace('\u2212', '-');

/** A run of one turn, session b turn 1, whose answer is `response` and its tokens `texts`, as the log keeps them. */
function answered(texts: string[], response: string): RunRecord[] {
  return [
    {
      kind: 'interaction',
      version: 0,
      ts: 1000,
      session: 'b',
      turn: 1,
      turnType: 'main',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      response,
      tokenIds: texts.map((_, i) => 10 + i),
      logprobs: texts.map(() => -1),
      tokenTexts: texts,
      startedAt: 900,
      finishedAt: 1000,
    },
  ];
}

describe('TokenView on the recorded run', () => {
  const records = recordedRun();
  const table = tokenTable(records, 's0', 1, EPS)!;

  it('colours every token by the chosen advantage', () => {
    using view = render(TokenView, { records, session: 's0', turn: 1, ...EPS });
    const btns = tokens(view.target);
    expect(btns).toHaveLength(48);
    // The answer reads as the model wrote it.
    expect(btns.map((b) => b.textContent).join('')).toBe(table.response);

    // Combined by default: the trained advantage.
    expect(btns.map((b) => Number(b.dataset.advantage))).toEqual(table.rows.map((r) => r.combined));
    const combinedBg = btns.map((b) => getComputedStyle(b).backgroundColor);

    pick(view.target, 'opd');
    expect(btns.map((b) => Number(b.dataset.advantage))).toEqual(table.rows.map((r) => r.opd));
    const opdBg = btns.map((b) => getComputedStyle(b).backgroundColor);
    expect(opdBg).not.toEqual(combinedBg);
    // Diverging scale: a positive and a negative OPD token get different hues, and a larger |A|
    // a stronger colour than a smaller one of the same sign.
    const pos = table.rows.filter((r) => r.opd! > 0).sort((a, b) => b.opd! - a.opd!);
    const neg = table.rows.find((r) => r.opd! < 0)!;
    expect(btns[pos[0].index].classList.contains('pos')).toBe(true);
    expect(btns[neg.index].classList.contains('neg')).toBe(true);
    expect(opdBg[pos[0].index]).not.toBe(opdBg[neg.index]);
    expect(opdBg[pos[0].index]).not.toBe(opdBg[pos[pos.length - 1].index]);

    pick(view.target, 'binary');
    // Binary RL: r_final = -1 on every token, one colour.
    expect(new Set(btns.map((b) => b.dataset.advantage))).toEqual(new Set(['-1']));
    expect(new Set(btns.map((b) => getComputedStyle(b).backgroundColor)).size).toBe(1);
  });

  it('shows a focused token’s log-probs, advantages, hint and clip state', () => {
    using view = render(TokenView, { records, session: 's0', turn: 1, ...EPS });
    const clipped = table.rows.find((r) => r.clip === 'low')!;
    const btn = tokens(view.target)[clipped.index];
    expect(btn.dataset.clip).toBe('low');
    expect(getComputedStyle(btn).textDecorationLine).toContain('underline');
    btn.focus();
    flushSync();
    expect(details(view.target).getAttribute('aria-live')).toBe('polite');
    expect(num(field(view.target, 'student'))).toContain(clipped.student.toFixed(3));
    expect(num(field(view.target, 'teacher'))).toContain(clipped.teacher!.toFixed(3));
    expect(num(field(view.target, 'opd'))).toContain(clipped.opd!.toFixed(3));
    expect(num(field(view.target, 'combined'))).toContain(clipped.combined!.toFixed(3));
    expect(num(field(view.target, 'trained'))).toContain(clipped.trained!.toFixed(3));
    expect(field(view.target, 'hint')).toBe(table.hint);
    expect(field(view.target, 'clip')).toContain('clipped low');
    expect(field(view.target, 'clip')).toContain(clipped.ratio!.toFixed(3));
  });

  it('says why a ratio outside the band was not clipped: the advantage’s sign', () => {
    // A token the step made likelier although its trained advantage is negative; the band's top
    // set below its ratio, as a run with a small ε_high has it.
    const row = table.rows.find((r) => r.trained !== null && r.trained < 0 && r.ratio !== null && r.ratio > 1)!;
    const eps = { epsLow: 0.2, epsHigh: (row.ratio! - 1) / 2 };
    using view = render(TokenView, { records, session: 's0', turn: 1, ...eps });
    tokens(view.target)[row.index].focus();
    flushSync();
    const text = field(view.target, 'clip');
    expect(text).toContain('not clipped, though above the band');
    expect(text).toContain('with a negative advantage the clip binds only below 0.80');
    expect(text).toContain('pushes this token down');
  });

  it('follows the mouse and the arrow keys (roving tabindex)', async () => {
    using view = render(TokenView, { records, session: 's1', turn: 1, ...EPS });
    const btns = tokens(view.target);
    expect(btns.filter((b) => b.tabIndex === 0)).toHaveLength(1);
    const high = tokenTable(records, 's1', 1, EPS)!.rows.find((r) => r.clip === 'high')!;

    await userEvent.hover(btns[high.index]);
    expect(field(view.target, 'clip')).toContain('clipped high');
    await userEvent.unhover(btns[high.index]);

    btns[0].focus();
    await userEvent.keyboard('{ArrowRight}{ArrowRight}');
    expect(document.activeElement).toBe(btns[2]);
    expect(btns[2].tabIndex).toBe(0);
    expect(btns[0].tabIndex).toBe(-1);
    expect(details(view.target).textContent).toContain('Token 3 of 48');
    await userEvent.keyboard('{End}');
    expect(document.activeElement).toBe(btns[47]);
  });

  it('says "not trained yet" for a turn no step has used', () => {
    using view = render(TokenView, { records, session: 's0', turn: 3, ...EPS });
    tokens(view.target)[0].focus();
    flushSync();
    expect(field(view.target, 'clip')).toBe('not trained yet');
  });

  it('follows a new session/turn and records appended later', () => {
    const props = reactive({ records: records.filter((r) => r.kind !== 'token_update') as RunRecord[], session: 's0', turn: 1, ...EPS });
    using view = render(TokenView, props);
    tokens(view.target)[5].focus();
    flushSync();
    expect(field(view.target, 'clip')).toBe('not trained yet');
    props.records = records;
    flushSync();
    expect(field(view.target, 'clip')).toContain('ρ');
    props.session = 's2';
    flushSync();
    expect(view.target.querySelector('h3')!.textContent).toContain('session s2, turn 1');
    expect(details(view.target).textContent).toContain('Hover over a token');
  });

  it('shows record text literally, never as HTML', () => {
    (window as unknown as { __pwned?: number }).__pwned = 0;
    using view = render(TokenView, { records: hostileTurn(), session: 'h', turn: 1, ...EPS });
    expect(view.target.querySelector('img, b, script')).toBeNull();
    expect(view.target.textContent).toContain(HOSTILE);
    expect(tokens(view.target)[0].textContent).toBe('<img src=x onerror="window.__pwned=1">');
    tokens(view.target)[1].focus();
    flushSync();
    expect(field(view.target, 'hint')).toBe(HOSTILE);
    expect((window as unknown as { __pwned?: number }).__pwned).toBe(0);
  });

  it("shows the demo model's byte tokens as pills, and keeps words whole on a phone", () => {
    // Token texts as the demo model's tokenizer records them (src/models/tokenizer.test.ts reads
    // them from its tokenizer.json): a lone lead byte, BEL, and "ж" as its two bytes.
    const texts = ['the', 'gr', 'ound', '<0xD0>', 'it', 'was', 'sc', 'ary', '.', '<0x07>', 'the', 'end', '<0xD0>', '<0xB6>'];
    const n = texts.length;
    const records = answered(texts, 'the ground\ufffd it was scary.\u0007 the endж');
    using view = render(TokenView, { records, session: 'b', turn: 1, ...EPS }, { width: '20rem' });
    const btns = tokens(view.target);
    expect(btns).toHaveLength(n);
    const pills = btns.filter((b) => b.classList.contains('byte'));
    expect(pills.map((b) => b.textContent)).toEqual(['0xD0', '0x07', '0xD0', '0xB6']);
    expect(pills.map((b) => b.title)).toEqual(['byte 0xD0 of “⟨0xD0⟩”', 'byte 0x07 of “⟨0x07⟩”', 'byte 0xD0 of “ж”', 'byte 0xB6 of “ж”']);
    const answer = view.target.querySelector('.answer')!.textContent!;
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(answer).not.toMatch(/[\ufffd\u0000-\u0008\u000b-\u001f]/);
    // The answer takes several lines, and each word's tokens stay on one: "ground" and "scary." are not split.
    const lines = new Set(btns.map((b) => b.offsetTop));
    expect(lines.size).toBeGreaterThan(1);
    for (const word of view.target.querySelectorAll('.word')) {
      // A pill is smaller than text, so "on one line" is: every box overlaps the first one vertically.
      const [first, ...rest] = [...word.querySelectorAll('button.tok')].map((b) => b.getBoundingClientRect());
      for (const r of rest) expect(r.top < first.bottom && first.top < r.bottom, word.textContent!).toBe(true);
    }
    expect([...view.target.querySelectorAll('.word')].map((w) => w.textContent)).toContain(' ground0xD0');
    btns[9].focus();
    flushSync();
    expect(details(view.target).textContent).toContain('byte 0x07 of “⟨0x07⟩”');
  });

  it('shows the tokens of a log from before tokens kept their bytes as pills that say what they made together, and claim no bytes', () => {
    // Such a log kept each byte token decoded alone, as "�": the answer kept the characters.
    const lost = '\ufffd';
    const records = answered(['He', 'said', lost, lost, lost, 'hi', 'and', lost, lost], 'He said ✓hi and ж');
    using view = render(TokenView, { records, session: 'b', turn: 1, ...EPS });
    const btns = tokens(view.target);
    expect(btns.map((b) => b.textContent)).toEqual(['He', ' said', '?', '?', '?', 'hi', ' and', '?', '?']);
    expect(btns[2].title).toBe('part of “✓”: this log did not keep its bytes');
    expect(btns[8].title).toBe('part of “ж”: this log did not keep its bytes');
    expect(view.target.querySelector('.answer')!.textContent).not.toContain('⟨?⟩');
    btns[3].focus();
    flushSync();
    expect(details(view.target).textContent).toContain('part of “✓”: this log did not keep its bytes');
  });
});
