/**
 * The shuffled-hint control (preset.advantage.hintSource "shuffled"). Each turn's teacher is
 * conditioned on an accepted hint of another session's turn instead of its own, so the hint no
 * longer answers the next state of the reply it grades. If OPD learns because its hint says
 * what this user asked of this reply, the control learns less; what it still learns is what any
 * hint of the run carries (docs/method.md#the-shuffled-hint-control).
 */

interface PooledHint {
  version: number;
  session: string;
  hint: string;
  /** Under a fixed schedule: the session's index and the turn, which order the candidates. */
  rank?: number;
  turn?: number;
}

/**
 * Under a fixed schedule the pool a turn draws from must not depend on which judges happened to
 * finish first: only hints of sessions from..below-1 (indices, all judged before this session
 * began) are candidates, in index and turn order. The turn's own hint joins at `rank`, `turn`.
 */
export interface ShuffleWindow {
  rank: number;
  turn: number;
  from: number;
  below: number;
}

/** How many recent accepted hints the pool keeps: a few steps' worth at any batch size here. */
const POOL_SIZE = 256;

export class HintShuffler {
  private pool: PooledHint[] = [];

  /**
   * A hint for a turn of `session` served by policy `version` whose own accepted hint is `own`:
   * another session's, from the same version where one exists, else from the newest earlier
   * version; `draw` (any unsigned integer, seeded by the caller) picks among those. `own` joins
   * the pool for later turns.
   *
   * @returns null when no other session has given an accepted hint yet (the turn gives no OPD sample)
   */
  swap(version: number, session: string, own: string, draw: number, window?: ShuffleWindow): string | null {
    let others = this.pool.filter((h) => h.session !== session && h.version <= version);
    if (window) {
      others = others
        .filter((h) => h.rank! >= window.from && h.rank! < window.below)
        .sort((a, b) => a.rank! - b.rank! || a.turn! - b.turn! || (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
    }
    let picked: string | null = null;
    if (others.length > 0) {
      const newest = Math.max(...others.map((h) => h.version));
      const same = others.filter((h) => h.version === newest);
      picked = same[draw % same.length].hint;
    }
    this.pool.push({ version, session, hint: own, ...(window ? { rank: window.rank, turn: window.turn } : {}) });
    // A fixed schedule's windows reach back a bounded number of sessions; a free run keeps the newest.
    if (window) this.pool = this.pool.filter((h) => h.rank === undefined || h.rank >= window.from - 4 * (window.below - window.from + 1));
    else if (this.pool.length > POOL_SIZE) this.pool.shift();
    return picked;
  }
}
