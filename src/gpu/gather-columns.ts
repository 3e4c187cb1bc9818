/**
 * The log-probs of several target columns over the same logits (the top-k OPD term: member j of
 * each row's set is column j) and their gradient: one pass over the logits where the backend
 * gathers many targets a row (Backend.logSoftmaxGatherMany), else a gather per column.
 */
import type { Backend, Tensor } from './backend';

/** The columns as one [R, k] array, row r's k targets together. */
function interleave<T extends Int32Array | Float32Array>(columns: readonly T[], make: (n: number) => T): T {
  const k = columns.length;
  const R = columns[0].length;
  const out = make(R * k);
  columns.forEach((c, j) => c.forEach((v, r) => (out[r * k + j] = v)));
  return out;
}

/** log p of column j's target at each row of `logits`, into out[j] at `at`. */
export async function readColumnLogprobs(be: Backend, logits: Tensor, columns: readonly Int32Array[], out: Float32Array[], at: number): Promise<void> {
  const k = columns.length;
  if (k === 0) return;
  if (be.logSoftmaxGatherMany) {
    const t = be.logSoftmaxGatherMany(
      logits,
      interleave(columns, (n) => new Int32Array(n)),
      k,
    );
    try {
      const logp = await be.read(t);
      out.forEach((o, j) => {
        for (let r = 0; r < columns[0].length; r++) o[at + r] = logp[r * k + j];
      });
    } finally {
      be.dispose(t);
    }
    return;
  }
  for (const [j, column] of columns.entries()) {
    const g = be.logSoftmaxGather(logits, column);
    try {
      out[j].set(await be.read(g.logp), at);
    } finally {
      be.dispose(g.logp);
      be.dispose(g.entropy);
    }
  }
}

/** Adds d(sum_j sum_r d[j][r] * log p(column j's target at row r)) / dlogits into `dlogits`. */
export function addColumnsGradient(be: Backend, dlogits: Tensor, logits: Tensor, columns: readonly Int32Array[], d: readonly Float32Array[]): void {
  const k = columns.length;
  if (k === 0) return;
  if (be.logSoftmaxGatherMany && be.logSoftmaxGatherManyBackward) {
    const targets = interleave(columns, (n) => new Int32Array(n));
    const g = be.tensor(
      interleave(d, (n) => new Float32Array(n)),
      [columns[0].length, k],
    );
    const dj = be.logSoftmaxGatherManyBackward(logits, targets, k, g);
    be.addInPlace(dlogits, dj);
    be.dispose(g);
    be.dispose(dj);
    return;
  }
  for (const [j, column] of columns.entries()) {
    const g = be.tensor(d[j], [d[j].length]);
    const dj = be.logSoftmaxGatherBackward(logits, column, g);
    be.addInPlace(dlogits, dj);
    be.dispose(g);
    be.dispose(dj);
  }
}
