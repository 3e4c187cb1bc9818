import { like, type Arr } from './types';

/**
 * Rotate-half RoPE as HF Llama applies it: for pair (i, i + hd/2) of each head,
 * angle = pos * theta^(-2i/hd). `inverse` rotates by -angle: the backward pass.
 */
export function ropeForward(x: Arr, positions: Int32Array, headDim: number, theta: number, inverse = false): Arr {
  const N = positions.length;
  const width = x.length / N;
  const half = headDim / 2;
  const out = like(x, x.length);
  const sign = inverse ? -1 : 1;
  for (let n = 0; n < N; n++) {
    const pos = positions[n];
    for (let h = 0; h < width / headDim; h++) {
      const o = n * width + h * headDim;
      for (let i = 0; i < half; i++) {
        const ang = pos * Math.pow(theta, (-2 * i) / headDim);
        const c = Math.cos(ang);
        const s = sign * Math.sin(ang);
        const a = x[o + i];
        const b = x[o + i + half];
        out[o + i] = a * c - b * s;
        out[o + i + half] = b * c + a * s;
      }
    }
  }
  return out;
}
