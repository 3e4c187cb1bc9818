import { describe, expect, it } from 'vitest';
import { hintSelectionOf, hintSourceOf, setOpdTerm, type MethodName, type MethodPreset } from '../../rl/presets';
import { armOf } from '../../runtime/arms';
import { TOPK_HINT_SELECTION } from '../../rl/topk-hints';
import { STORY_LR } from '../../runtime/run-config';
import { ComparisonQueue, comparedArms, comparisonProblems, comparisonSetups } from './comparison';
import { defaultSetup, toRunConfig, withMethod, withScenario } from './setup';

/** The arm a setup runs, by the same mapping the run summary uses. */
const armOfSetup = (s: { method: MethodName; preset: MethodPreset }) => armOf(s.method, hintSourceOf(s.preset));

describe('comparing the arms', () => {
  it('makes one runnable setup per trained arm, each with its own preset and learning rate, keeping the training settings', () => {
    const setup = defaultSetup();
    setup.preset.batch.size = 4;
    setup.preset.finetune.lora.rank = 4;
    const setups = comparisonSetups(setup);
    expect(setups.map(armOfSetup)).toEqual(['binary', 'opd', 'combined', 'combined-shuffled']);
    expect(setups.map((s) => s.label)).toEqual([
      'storyteller comparison · Binary RL · seed 1',
      'storyteller comparison · OPD · seed 1',
      'storyteller comparison · Combined · seed 1',
      'storyteller comparison · Combined, shuffled hints · seed 1',
    ]);
    for (const s of setups) {
      expect(s.preset.method).toBe(s.method);
      expect(s.preset.batch.size).toBe(4);
      expect(s.preset.finetune.lora.rank).toBe(4);
      expect(s.seed).toBe(setup.seed);
      expect(() => toRunConfig(s)).not.toThrow();
    }
    // The storyteller's measured rate per method, not the setup's method's rate for all.
    expect(setups.map((s) => s.preset.optimizer.lr)).toEqual([STORY_LR.binary, STORY_LR.opd, STORY_LR.combined, STORY_LR.combined]);
    expect(setups[0].preset.advantage.weights).toMatchObject({ opd: 0 });
    expect(setups[1].preset.advantage.weights).toMatchObject({ binary: 0 });
    expect(setups.map((s) => hintSourceOf(s.preset))).toEqual(['judge', 'judge', 'judge', 'shuffled']);
    // The control differs from Combined in the hint source only.
    expect({ ...setups[3].preset, advantage: { ...setups[3].preset.advantage, hintSource: 'judge' } }).toEqual({
      ...setups[2].preset,
      advantage: { ...setups[2].preset.advantage, hintSource: 'judge' },
    });
  });

  it('keeps each arm’s own rate from any method’s default, and the person’s rate for every arm when set by hand', () => {
    const setup = withMethod(defaultSetup(), 'binary');
    expect(setup.preset.optimizer.lr).toBe(STORY_LR.binary);
    expect(comparisonSetups(setup).map((s) => s.preset.optimizer.lr)).toEqual([STORY_LR.binary, STORY_LR.opd, STORY_LR.combined, STORY_LR.combined]);
    setup.preset.optimizer.lr = 2e-4;
    expect(comparisonSetups(setup).map((s) => s.preset.optimizer.lr)).toEqual([2e-4, 2e-4, 2e-4, 2e-4]);
  });

  it('runs every arm on each seed, seed by seed, from the setup’s seed on', () => {
    const setup = withScenario(defaultSetup(), 'student');
    setup.seed = 7;
    setup.label = 'mine';
    const setups = comparisonSetups(setup, 3);
    expect(setups.map((s) => [armOfSetup(s), s.seed])).toEqual(
      [7, 8, 9].flatMap((seed) => ['binary', 'opd', 'combined', 'combined-shuffled'].map((arm) => [arm, seed])),
    );
    expect(setups[5].label).toBe('mine · OPD · seed 8');
    // Student keeps one rate for every method.
    expect(new Set(setups.map((s) => s.preset.optimizer.lr))).toEqual(new Set([1e-4]));
    for (const s of setups) expect(toRunConfig(s).seed).toBe(s.seed);
  });

  it('adds OPD and Combined on another child’s hints to a storyteller comparison that asks, and to no other', () => {
    const setup = defaultSetup();
    expect(comparedArms(setup)).toEqual(['binary', 'opd', 'combined', 'combined-shuffled']);
    expect(comparedArms(setup, { otherChild: true })).toEqual(['binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child']);
    const setups = comparisonSetups(setup, 2, { otherChild: true });
    expect(setups.map((s) => [armOfSetup(s), s.seed])).toEqual(
      [1, 2].flatMap((seed) => ['binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child'].map((arm) => [arm, seed])),
    );
    expect(setups[4].label).toBe("storyteller comparison · OPD, another child's hints · seed 1");
    for (const s of setups) expect(() => toRunConfig(s)).not.toThrow();
    // Each control differs from its method in the hint source only.
    for (const [control, own] of [
      [4, 1],
      [5, 2],
    ]) {
      expect(hintSourceOf(setups[control].preset)).toBe('other-child');
      expect({ ...setups[control].preset, advantage: { ...setups[control].preset.advantage, hintSource: 'judge' } }).toEqual({
        ...setups[own].preset,
        advantage: { ...setups[own].preset.advantage, hintSource: 'judge' },
      });
    }
    // A student has no other child: the comparison is the usual four arms.
    expect(comparisonSetups(withScenario(defaultSetup(), 'student'), 1, { otherChild: true }).map(armOfSetup)).toEqual([
      'binary',
      'opd',
      'combined',
      'combined-shuffled',
    ]);
    const queue = new ComparisonQueue();
    queue.begin(setup, 1, { otherChild: true });
    queue.add('run-0');
    expect(queue.position).toEqual({ run: 1, of: 6 });
  });

  it('refuses, in the form’s words, top-k hint selection, which the shuffled control cannot use', () => {
    const setup = defaultSetup();
    expect(comparisonProblems(setup)).toEqual([]);
    setup.preset.advantage.hintSelection = { ...TOPK_HINT_SELECTION };
    expect(hintSelectionOf(setup.preset).rule).not.toBe('longest');
    expect(() => comparisonSetups(setup)).toThrow(/hintSource/);
    expect(comparisonProblems(setup)).toEqual([expect.stringMatching(/shuffled-hint control picks the longest accepted hint/)]);
  });

  it('refuses, in the form’s words, the top-k OPD term, which the shuffled control cannot use', () => {
    const setup = defaultSetup();
    setOpdTerm(setup.preset.advantage, 'topk-distill');
    expect(() => comparisonSetups(setup)).toThrow(/opdTerm/);
    expect(comparisonProblems(setup)).toEqual([expect.stringMatching(/set “OPD trains” to the sampled token/)]);
  });
});

describe('ComparisonQueue', () => {
  it('hands out one setup per arm and seed in turn, tells each run the runs before it, and ends after the last', () => {
    const queue = new ComparisonQueue();
    expect(queue.active).toBe(false);
    expect(queue.next()).toBeNull();
    const handed = [queue.begin(defaultSetup(), 3)];
    expect(queue.active).toBe(true);
    const ids: string[] = [];
    expect(queue.position).toBeNull();
    for (let i = 0; ; i++) {
      expect(queue.add(`run-${i}`)).toEqual(ids);
      ids.push(`run-${i}`);
      expect(queue.position).toEqual({ run: i + 1, of: 12 });
      const next = queue.next();
      if (!next) break;
      handed.push(next);
    }
    expect(handed.map((s) => `${armOfSetup(s)}@${s.seed}`)).toEqual(comparisonSetups(defaultSetup(), 3).map((s) => `${armOfSetup(s)}@${s.seed}`));
    expect(handed).toHaveLength(12);
    expect(queue.active).toBe(false);
    expect(queue.position).toBeNull();
    expect(queue.next()).toBeNull();
  });

  it('stops handing out setups once ended', () => {
    const queue = new ComparisonQueue();
    queue.begin(defaultSetup());
    queue.end();
    expect(queue.active).toBe(false);
    expect(queue.next()).toBeNull();
  });
});
