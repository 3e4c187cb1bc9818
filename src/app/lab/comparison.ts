/**
 * The paper's comparison in one action: the same setup once per trained arm (Binary RL, OPD,
 * Combined and the shuffled-hint control; on the storyteller, if asked, OPD and Combined with
 * another child's hints) and per seed, run one after another and overlaid on one chart. The step-0 evaluation every run starts with is the untrained base, so the base arm
 * needs no run of its own. On the tool-call track the comparison is its reward ablation:
 * integrated step rewards against the outcome only.
 */
import { PresetError } from '../../rl/errors';
import { ARM_TITLES, armSetup, DEFAULT_TRAINED_ARMS, OTHER_CHILD_ARMS, type TrainedArm } from '../../runtime/arms';
import { armPreset } from '../../runtime/run-config';
import type { LabSetup } from './setup';
import { REWARD_MODE_CHOICES } from './toolcall-setup';

/** How many seeds a comparison can run each arm with; every arm × seed is one run. */
export const COMPARE_SEED_CHOICES = [1, 3, 5] as const;

/**
 * Which arms a personal comparison runs: the three methods and the shuffled-hint control, or, on
 * the storyteller, those and the other-child control too (OPD and Combined on the hints written
 * for another child).
 */
export interface CompareOptions {
  otherChild?: boolean;
}

/** The trained arms of a comparison of `setup` (the other-child control on a storyteller only). */
export function comparedArms(setup: Pick<LabSetup, 'scenario'>, options: CompareOptions = {}): TrainedArm[] {
  const withChild = options.otherChild === true && setup.scenario === 'storyteller';
  return [...DEFAULT_TRAINED_ARMS, ...(withChild ? OTHER_CHILD_ARMS : [])];
}

/**
 * The setups of a comparison. Personal track: one per trained arm (comparedArms) and seed (the
 * setup's seed, seed + 1, ...), each with its arm's preset and learning rate (armPreset) and the
 * training settings the person chose, so that only the arm and the seed differ between runs. Seed
 * by seed, every arm of a seed before the next seed: a comparison stopped early still compares
 * all arms on the seeds it finished.
 *
 * @throws PresetError when an arm cannot use the setup's settings (a control with top-k hint selection)
 */
export function comparisonSetups(setup: LabSetup, seeds = 1, options: CompareOptions = {}): LabSetup[] {
  if (setup.track === 'toolcall') return rewardModeSetups(setup);
  const group = setup.label.trim() || `${setup.scenario} comparison`;
  const out: LabSetup[] = [];
  for (let i = 0; i < seeds; i++) {
    const seed = setup.seed + i;
    for (const arm of comparedArms(setup, options)) {
      const { method } = armSetup(arm);
      out.push({ ...setup, method, seed, label: `${group} · ${ARM_TITLES[arm]} · seed ${seed}`, preset: armPreset(arm, setup.scenario, setup.preset) });
    }
  }
  return out;
}

/** Why the comparison cannot start with these settings, in the form's words (empty when it can). */
export function comparisonProblems(setup: LabSetup, options: CompareOptions = {}): string[] {
  try {
    comparisonSetups(setup, 1, options);
    return [];
  } catch (e) {
    if (!(e instanceof PresetError)) throw e;
    // Top-k selection scores candidate hints against this reply, which another session's hint is not.
    if (e.field === 'advantage.hintSource')
      return [
        'The shuffled-hint control picks the longest accepted hint: set “Hint choice” to the longest hint, so that every arm picks its hint the same way.',
      ];
    // The top-k term scores the teacher over this reply's own top-k sets, which another session's hint does not condition.
    if (e.field === 'advantage.opdTerm')
      return ['The shuffled-hint control trains the sampled token: set “OPD trains” to the sampled token, so that every arm trains the same term.'];
    return [`The comparison cannot run: ${e.message}`];
  }
}

/**
 * The tool-call track's comparison (the paper's step-reward ablation): the same setup with
 * integrated rewards (outcome plus the PRM's step votes) and with the outcome only.
 */
function rewardModeSetups(setup: LabSetup): LabSetup[] {
  const group = setup.label.trim() || 'toolcall comparison';
  return REWARD_MODE_CHOICES.map(({ id, title }) => ({ ...setup, label: `${group} · ${title}`, toolcall: { ...setup.toolcall, rewardMode: id } }));
}

/** A comparison under way: the setups still to run and the runs already started. */
export class ComparisonQueue {
  private pending: LabSetup[] = [];
  private started: string[] = [];
  private running = false;
  private total = 0;

  get active(): boolean {
    return this.running;
  }

  /** Which run of the comparison started last, of how many ("run 2 of 4"); null when none runs. */
  get position(): { run: number; of: number } | null {
    return this.running && this.started.length ? { run: this.started.length, of: this.total } : null;
  }

  /** Starts comparing the arms on `setup` over `seeds` seeds; returns the first run's setup. */
  begin(setup: LabSetup, seeds = 1, options: CompareOptions = {}): LabSetup {
    const [first, ...rest] = comparisonSetups(setup, seeds, options);
    this.total = rest.length + 1;
    this.pending = rest;
    this.started = [];
    this.running = true;
    return first;
  }

  /** Counts a run of the comparison as started; returns the runs before it, to overlay on its charts. */
  add(runId: string): string[] {
    const before = this.started;
    this.started = [...before, runId];
    return before;
  }

  /** The next setup to run, or null (and the comparison is over) when none is left. */
  next(): LabSetup | null {
    const setup = this.running ? this.pending.shift() : undefined;
    if (!setup) this.end();
    return setup ?? null;
  }

  end(): void {
    this.running = false;
    this.pending = [];
    this.started = [];
    this.total = 0;
  }
}
