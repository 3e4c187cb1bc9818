/**
 * RoPE from a table of each position's cosines and sines, computed once per (position, pair)
 * with the reference's formula (ops/rope.ts), where the reference recomputes them for every head
 * of every token: the same values, bit for bit, for a fraction of the transcendental calls.
 */
import type { Arr } from '../ops/types';

export class RopeTable {
  private cos = new Float64Array(0);
  private sin = new Float64Array(0);
  private positions = 0;

  constructor(
    readonly headDim: number,
    readonly theta: number,
  ) {}

  /** Makes the table cover positions [0, n). */
  private cover(n: number): void {
    if (n <= this.positions) return;
    const half = this.headDim / 2;
    const size = Math.max(n, this.positions * 2, 256);
    const cos = new Float64Array(size * half);
    const sin = new Float64Array(size * half);
    cos.set(this.cos);
    sin.set(this.sin);
    for (let pos = this.positions; pos < size; pos++) {
      for (let i = 0; i < half; i++) {
        const ang = pos * Math.pow(this.theta, (-2 * i) / this.headDim);
        cos[pos * half + i] = Math.cos(ang);
        sin[pos * half + i] = Math.sin(ang);
      }
    }
    [this.cos, this.sin, this.positions] = [cos, sin, size];
  }

  /** out = rope(x) for x [N, heads * headDim] at `positions` (inverse: rotated back). */
  apply(x: Arr, positions: Int32Array, inverse: boolean, out: Arr): void {
    const N = positions.length;
    const width = x.length / N;
    const hd = this.headDim;
    const half = hd / 2;
    let max = 0;
    for (const p of positions) max = Math.max(max, p);
    this.cover(max + 1);
    const sign = inverse ? -1 : 1;
    for (let n = 0; n < N; n++) {
      const t = positions[n] * half;
      for (let o = n * width; o < (n + 1) * width; o += hd) {
        for (let i = 0; i < half; i++) {
          const c = this.cos[t + i];
          const s = sign * this.sin[t + i];
          const a = x[o + i];
          const b = x[o + i + half];
          out[o + i] = a * c - b * s;
          out[o + i + half] = b * c + a * s;
        }
      }
    }
  }
}
