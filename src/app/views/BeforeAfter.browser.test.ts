import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import BeforeAfter from './BeforeAfter.svelte';
import HowItWorks from './HowItWorks.svelte';
import type { HowTopic } from './how-topic';
import { HOSTILE, hostileTurn, recordedRun, render } from '../../../test/support/views/testing';

describe('BeforeAfter', () => {
  const records = recordedRun();
  const evals = records.filter((r) => r.kind === 'evaluation');

  it('puts the baseline and the latest answer side by side, per problem', () => {
    using view = render(BeforeAfter, { records });
    const select = view.target.querySelector('select')!;
    expect([...select.options].map((o) => o.value)).toEqual(['story#0', 'story#1', 'story#2']);
    const [before, after] = [...view.target.querySelectorAll('article')];
    expect(before.querySelector('.text')!.textContent).toBe(evals[0].perProblem[0].detail);
    expect(after.querySelector('.text')!.textContent).toBe(evals[1].perProblem[0].detail);
    expect(before.textContent).toContain('step 0 · policy v0');
    expect(after.textContent).toContain('step 2 · policy v2');
    // Its two scores say what they are: this answer's, and the evaluation's mean over its problems.
    expect(after.textContent).toContain(`this answer ${evals[1].perProblem[0].score!.toFixed(2)}`);
    expect(after.textContent).toContain(`mean of all 3 answers ${evals[1].scores.score.toFixed(2)}`);
    expect(view.target.querySelector('[data-testid="before-after-meaning"]')!.textContent).toMatch(/^Score 0–1: the evaluator’s rating/);
    expect(after.querySelector('.delta')!.textContent).toBe(`+${(evals[1].perProblem[0].score! - evals[0].perProblem[0].score!).toFixed(2)} vs baseline`);

    select.value = 'story#2';
    select.dispatchEvent(new Event('change', { bubbles: true }));
    flushSync();
    const [b2, a2] = [...view.target.querySelectorAll('article')];
    expect(b2.querySelector('.text')!.textContent).toBe(evals[0].perProblem[2].detail);
    expect(a2.querySelector('.text')!.textContent).toBe(evals[1].perProblem[2].detail);
  });

  it('names each problem by its opening, cut to fit a phone, and says what a storyteller score means', () => {
    const openings = ['Once upon a time, there was a little dog who loved to run in the big green park.', 'Tom had a red ball.', 'Lily went out.'];
    const withOpenings = records.map((r) =>
      r.kind === 'evaluation' ? { ...r, scores: { ...r.scores, 'wish:pet': 0.5 }, perProblem: r.perProblem.map((p, i) => ({ ...p, prompt: openings[i] })) } : r,
    );
    using view = render(BeforeAfter, { records: withOpenings });
    const names = [...view.target.querySelectorAll('option')].map((o) => o.textContent);
    expect(names).toEqual(['1. Once upon a time, there was a little dog who…', '2. Tom had a red ball.', '3. Lily went out.']);
    expect(view.target.textContent).toContain('all five of the child’s wishes (pet, name, favourite, sleep, gentle)');
  });

  it('waits for a later evaluation and shows text literally', () => {
    using view = render(BeforeAfter, { records: hostileTurn() });
    expect(view.target.querySelector('img, b, script, i')).toBeNull();
    const [before, after] = [...view.target.querySelectorAll('article')];
    expect(before.querySelector('.text')!.textContent).toBe(HOSTILE);
    expect(after.textContent).toContain('No later evaluation yet');
    expect(view.target.querySelector('option')!.textContent).toContain('p<i>1</i>');
  });

  it('says so when there is no evaluation', () => {
    using view = render(BeforeAfter, { records: [] });
    expect(view.target.textContent).toContain('No evaluation yet');
  });
});

describe('HowItWorks', () => {
  it.each(['setup', 'charts', 'feed', 'tokens', 'before-after', 'talk', 'shuffled-control'] as HowTopic[])('explains %s', (topic) => {
    using view = render(HowItWorks, { topic });
    const d = view.target.querySelector('details')!;
    expect(d.dataset.topic).toBe(topic);
    expect(d.querySelector('summary')!.textContent!.length).toBeGreaterThan(5);
    expect(d.querySelector('p')!.textContent!.length).toBeGreaterThan(40);
    if (topic !== 'feed' && topic !== 'before-after') {
      const math = d.querySelector('math')!;
      expect(math.namespaceURI).toBe('http://www.w3.org/1998/Math/MathML');
      expect(math.getAttribute('aria-label')).toBeTruthy();
      // Laid out as a formula, on one line (not one box per symbol).
      const first = math.firstElementChild!.getBoundingClientRect();
      const last = math.lastElementChild!.getBoundingClientRect();
      expect(last.left).toBeGreaterThan(first.left);
      const mid = (r: DOMRect) => r.top + r.height / 2;
      expect(Math.abs(mid(last) - mid(first))).toBeLessThan(Math.max(first.height, last.height) / 2);
    }
  });

  it("explains OPD's hint choice: the paper's longest hint by default, the reference's top-k selection as an option", () => {
    using setup = render(HowItWorks, { topic: 'setup' });
    const text = setup.target.textContent!.replace(/\s+/g, ' ');
    expect(text).toContain('The paper takes the longest accepted one (the default)');
    expect(text).toMatch(/4 most likely next tokens.*share the most tokens with the student’s 4/);
    expect(text).toMatch(/clips A\s?OPD to \[−1, 1\]/);
    // The reference's top-k distillation is an OPD term here; the sampled token stays the default.
    expect(text).toMatch(/the “top-k distillation” OPD term \(advantage\.opdTerm\); the default trains the sampled token only/);
    using feed = render(HowItWorks, { topic: 'feed' });
    expect(feed.target.textContent!.replace(/\s+/g, ' ')).toMatch(/candidate hints, shortest first.*a tie keeps the shorter hint/);
  });

  it('explains the shuffled-hint control: another session’s hint, and what it still carries in the storyteller', () => {
    using view = render(HowItWorks, { topic: 'shuffled-control' });
    const text = view.target.textContent!.replace(/\s+/g, ' ');
    expect(text).toMatch(/teacher is conditioned on an accepted hint of another session’s turn, from the same policy version/);
    expect(text).toContain('no longer answers the next state of the reply it grades');
    expect(text).toContain('the control learns less than Combined');
    expect(text).toMatch(/every session is the same child, so every hint carries the same wishes/);
  });
});
