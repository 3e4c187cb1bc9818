import { InvalidArgumentError } from './errors';

/**
 * What happens to a judged sample whose advantage is zero on every token (an ambiguous or
 * split judge, an unjudged last turn) and that carries no distillation term (opdTopK: the top-k
 * or reverse-KL OPD term travels beside advantages that keep only w_binary * r, so a hinted
 * sample of method "opd" has all-zero advantages and still something to learn). Such a sample still takes a batch slot under every
 * policy, so batches are released every N samples whatever the judge says and training never
 * stalls waiting for "useful" samples; the policy only decides its loss mask.
 *
 * 'at-least-one-per-session' (reference): masked, except that the first judged sample of a
 *   session that has no trainable sample yet is promoted to trainable, so every session that
 *   reached the judge contributes to training.
 * 'mask-all': always masked.
 * 'train-all': never masked (counts in the loss denominators, contributes no policy gradient).
 */
export const ZERO_ADVANTAGE_POLICIES = ['at-least-one-per-session', 'mask-all', 'train-all'] as const;
export type ZeroAdvantagePolicy = (typeof ZERO_ADVANTAGE_POLICIES)[number];

/** The fields the buffer needs from a sample. */
export interface BufferableSample {
  session: string;
  turn: number;
  /** The policy version that generated the response. */
  version: number;
  advantages: readonly number[];
  /** The turn had a next state and went through the judge. */
  judged: boolean;
  /** An OPD distillation term beside the advantages (TrainingSample.opdTopK): trainable whatever they are, unless its weight is 0. */
  opdTopK?: { weight: number };
}

/** Whether a sample has nothing to learn: zero advantage on every token and no weighted distillation term. */
export function hasZeroAdvantage(sample: BufferableSample): boolean {
  return sample.advantages.every((a) => a === 0) && !(sample.opdTopK && sample.opdTopK.weight !== 0);
}

/** A sample as released for training. */
export type BufferedSample<S> = S & {
  /** Loss mask: false means the sample takes a slot but contributes no loss. */
  trainable: boolean;
  /** Made trainable by the at-least-one-per-session rule despite zero advantages. */
  promoted: boolean;
};

/** One optimizer step's worth of samples. */
export interface Batch<S> {
  /** 0-based count of batches released by this buffer. */
  index: number;
  samples: BufferedSample<S>[];
  /** Distinct policy versions that generated the samples, ascending. */
  versions: number[];
  /** Number of trainable samples. */
  trainable: number;
}

/** The result of SampleBuffer.add. */
export interface AddResult<S> {
  /** The sample as queued, with its loss mask decided: log it as a sample record now. */
  sample: BufferedSample<S>;
  /** The batch this sample completed, or null. */
  batch: Batch<S> | null;
}

/** Running counts, for the run log and the live charts. */
export interface BufferStats {
  added: number;
  /** Samples whose advantage was zero on every token, without a distillation term (hasZeroAdvantage). */
  zeroAdvantage: number;
  promoted: number;
  masked: number;
  batches: number;
}

/** Buffer settings. */
export interface SampleBufferOptions {
  /** Samples per batch (default 16, the reference's rollout batch). */
  batchSize?: number;
  /** Default 'at-least-one-per-session', the reference's rule. */
  zeroAdvantage?: ZeroAdvantagePolicy;
}

/** The reference's rollout batch: one optimizer step per 16 samples. */
export const DEFAULT_BATCH_SIZE = 16;

/**
 * Collects judged samples and releases them in batches of N, oldest first, each sample
 * keeping the policy version that generated it so the trainer can see how off-policy a
 * batch is.
 */
export class SampleBuffer<S extends BufferableSample> {
  readonly batchSize: number;
  readonly zeroAdvantage: ZeroAdvantagePolicy;
  private queue: BufferedSample<S>[] = [];
  /** Sessions that already have a trainable sample, for the at-least-one rule. */
  private readonly effectiveSessions = new Set<string>();
  private readonly counts: BufferStats = { added: 0, zeroAdvantage: 0, promoted: 0, masked: 0, batches: 0 };

  constructor(options: SampleBufferOptions = {}) {
    const size = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(size) || size < 1) {
      throw new InvalidArgumentError(`batchSize is ${size}; use an integer of at least 1 (reference: 16).`);
    }
    this.batchSize = size;
    this.zeroAdvantage = options.zeroAdvantage ?? 'at-least-one-per-session';
  }

  /**
   * Adds one sample (not mutated; a tagged copy is queued).
   *
   * @returns the tagged copy, and the batch when this sample fills one
   */
  add(sample: S): AddResult<S> {
    if (!Number.isInteger(sample.version) || sample.version < 0) {
      throw new InvalidArgumentError(
        `sample ${sample.session}#${sample.turn} has policy version ${sample.version}; tag every ` +
          `sample with the non-negative integer version of the policy that generated it.`,
      );
    }
    this.counts.added++;
    const zero = hasZeroAdvantage(sample);
    let trainable = true;
    let promoted = false;
    if (zero) {
      this.counts.zeroAdvantage++;
      trainable = this.zeroAdvantage === 'train-all';
      if (this.zeroAdvantage === 'at-least-one-per-session' && sample.judged && !this.effectiveSessions.has(sample.session)) {
        trainable = true;
        promoted = true;
        this.counts.promoted++;
      }
    }
    if (trainable) this.effectiveSessions.add(sample.session);
    else this.counts.masked++;
    const tagged: BufferedSample<S> = { ...sample, trainable, promoted };
    this.queue.push(tagged);
    return { sample: tagged, batch: this.queue.length >= this.batchSize ? this.release(this.batchSize) : null };
  }

  /** Releases whatever is queued as a short batch (end of a run); null when empty. */
  flush(): Batch<S> | null {
    return this.queue.length > 0 ? this.release(this.queue.length) : null;
  }

  /**
   * Forgets a finished session for the at-least-one rule, so the set does not grow for the
   * whole run. A sample that arrives later for it counts as a new session's.
   */
  forgetSession(session: string): void {
    this.effectiveSessions.delete(session);
  }

  /** Samples waiting for a batch. */
  get size(): number {
    return this.queue.length;
  }

  /** A snapshot of the running counts. */
  stats(): BufferStats {
    return { ...this.counts };
  }

  private release(n: number): Batch<S> {
    const samples = this.queue.slice(0, n);
    this.queue = this.queue.slice(n);
    const versions = [...new Set(samples.map((s) => s.version))].sort((a, b) => a - b);
    return {
      index: this.counts.batches++,
      samples,
      versions,
      trainable: samples.filter((s) => s.trainable).length,
    };
  }
}
