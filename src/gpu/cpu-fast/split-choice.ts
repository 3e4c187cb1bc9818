/**
 * Whether to split a job too small to be sure of paying for its hand-off. Split, it costs a
 * microsecond while the helpers are awake (spinning between jobs), 50 to 90 µs when one must be
 * woken on an idle virtual machine, and a scheduler's time slice when another process has the
 * helpers' cores. None of that can be seen from here, so the choice is measured: small jobs run
 * the way that has cost less per multiply-add lately, and now and then a short burst tries the
 * other way (a burst, so that its first job wakes the helpers and the rest find them awake).
 * A trial that loses makes the next one wait twice as long. Either way every result is the same:
 * a split never changes what a job computes.
 */

/** Small jobs per trial of the other way. */
const BURST = 16;
/** Small jobs between trials, at first and at most. */
const INTERVAL = { first: 128, most: 16384 };
/** A trial stops early once its way costs this many times the other. */
const GIVE_UP = 3;
/** Weight of the newest job in the moving averages. */
const ALPHA = 1 / 8;

export class SplitChoice {
  /** Moving averages of milliseconds per unit of work, alone and split (NaN: not yet measured). */
  private readonly cost = { alone: Number.NaN, split: Number.NaN };
  private best: 'alone' | 'split' = 'alone';
  /** Jobs left in the running trial of the other way (0: none running). */
  private trialLeft = 0;
  private interval = INTERVAL.first;
  private untilTrial = 0;

  /** Whether the next small job should be split. */
  split(): boolean {
    if (this.trialLeft === 0 && --this.untilTrial <= 0) {
      this.trialLeft = BURST;
      // Measured afresh: what the other way cost long ago says little about now.
      this.cost[other(this.best)] = Number.NaN;
    }
    return (this.trialLeft > 0 ? other(this.best) : this.best) === 'split';
  }

  /** What the job `split()` just chose for cost, in milliseconds for `work` units. */
  record(split: boolean, ms: number, work: number): void {
    const way = split ? 'split' : 'alone';
    const c = ms / work;
    this.cost[way] = Number.isNaN(this.cost[way]) ? c : this.cost[way] + ALPHA * (c - this.cost[way]);
    if (this.trialLeft === 0 || way === this.best) return;
    this.trialLeft--;
    const losing = this.cost[way] > GIVE_UP * this.cost[this.best];
    if (this.trialLeft > BURST - 2 || (this.trialLeft > 0 && !losing)) return;
    // The trial is over: the cheaper way is kept, and a lost trial waits twice as long to recur.
    this.trialLeft = 0;
    if (Number.isNaN(this.cost[this.best]) || this.cost[way] < this.cost[this.best]) {
      this.best = way;
      this.interval = INTERVAL.first;
    } else {
      this.interval = Math.min(INTERVAL.most, 2 * this.interval);
    }
    this.untilTrial = this.interval;
  }
}

function other(way: 'alone' | 'split'): 'alone' | 'split' {
  return way === 'alone' ? 'split' : 'alone';
}
