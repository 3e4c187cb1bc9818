/**
 * Helpers of the views' browser tests.
 *
 * test/fixtures/recorded-run.jsonl is a real run log, made once with the headless pipeline:
 *   npx nextstate run --example storyteller > /tmp/c.json
 *   (edit /tmp/c.json: schedule.steps 2, schedule.evalEvery 2, schedule.evalProblems 3,
 *    preset.batch.size 4)
 *   npx nextstate run --config /tmp/c.json --policy data/models/stories260K --out /tmp/r.nsrun
 *   npx nextstate export /tmp/r.nsrun --records test/fixtures/recorded-run.jsonl
 * 91 records: 5 sessions (s0-s4), 16 interactions, binary and hint judge votes/results, 12
 * samples, 2 train steps with token_update records, evaluations at steps 0 and 2.
 */
import { flushSync, mount, unmount, type Component } from 'svelte';
import type { RunRecord } from '../../../src/rl/records';
import recordedText from '../../fixtures/recorded-run.jsonl?raw';

export function parseJsonl(text: string): RunRecord[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunRecord);
}

/** A fresh copy of the recorded run's records. */
export function recordedRun(): RunRecord[] {
  return parseJsonl(recordedText);
}

/** Mounts a component into a new div in document.body; dispose unmounts and removes it. */
export function render<P extends Record<string, unknown>>(
  component: Component<P>,
  props: P,
  opts: { width?: string } = {},
): { target: HTMLDivElement; [Symbol.dispose](): void } {
  const target = document.createElement('div');
  if (opts.width) target.style.width = opts.width;
  document.body.append(target);
  const app = mount(component, { target, props });
  flushSync();
  return {
    target,
    [Symbol.dispose]() {
      void unmount(app);
      target.remove();
    },
  };
}

/** Text that would run script or make elements if it were rendered as HTML. */
export const HOSTILE = '<img src=x onerror="window.__pwned=1"><b>bold</b><script>window.__pwned=2</script>';

/** A small hand-made turn whose texts are HOSTILE. */
export function hostileTurn(): RunRecord[] {
  const base = { version: 0, ts: 1000, session: 'h', turn: 1 };
  return [
    {
      ...base,
      kind: 'interaction',
      turnType: 'main',
      messages: [{ role: 'user', content: `question ${HOSTILE}` }],
      response: `${HOSTILE} end`,
      tokenIds: [1, 2, 3],
      logprobs: [-1, -2, -3],
      tokenTexts: ['<img src=x onerror="window.__pwned=1">', '<b>bold</b><script>window.__pwned=2</script>', 'end'],
      startedAt: 900,
      finishedAt: 1000,
    },
    { ...base, kind: 'judge_vote', judge: 'binary', vote: 0, raw: `${HOSTILE} \\boxed{-1}`, score: -1, hint: null },
    { ...base, kind: 'judge_result', judge: 'binary', score: -1, accepted: true, hint: null, teacherLogpCount: 0 },
    { ...base, kind: 'judge_vote', judge: 'hint', vote: 0, raw: `[HINT_START]${HOSTILE}[HINT_END] \\boxed{1}`, score: 1, hint: HOSTILE },
    {
      ...base,
      kind: 'judge_result',
      judge: 'hint',
      score: 1,
      accepted: true,
      hint: HOSTILE,
      teacherLogpCount: 3,
      teacherLogp: [-0.5, -2.5, -3],
    },
    {
      ...base,
      kind: 'evaluation',
      name: 'personalization',
      step: 0,
      scores: { score: 0 },
      perProblem: [{ id: `p<i>1</i>`, score: 0, detail: HOSTILE }],
    },
  ];
}
