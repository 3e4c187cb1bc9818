import type { Arr } from './types';

/**
 * The backward of an embedding lookup (out[n] = table[ids[n]]), added into `dTable` [V, D]:
 * dTable[ids[n]] += dOut[n]. Ids repeat (a token seen twice gets both rows' gradients), which
 * is why this is not scatterRows. The order of the sum is by position, as the WGSL kernel's.
 */
export function embeddingBackwardAdd(dTable: Arr, ids: Int32Array, dOut: Arr, D: number): void {
  ids.forEach((id, n) => {
    const o = id * D;
    const s = n * D;
    for (let d = 0; d < D; d++) dTable[o + d] += dOut[s + d];
  });
}
