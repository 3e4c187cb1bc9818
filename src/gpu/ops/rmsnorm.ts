import { like, type Arr } from './types';

/** y = x / sqrt(mean(x^2) + eps) * w over rows of width D = w.length. */
export function rmsnormForward(x: Arr, w: Arr, eps: number): Arr {
  const D = w.length;
  const out = like(x, x.length);
  for (let r = 0; r < x.length / D; r++) {
    let ss = 0;
    for (let i = 0; i < D; i++) ss += x[r * D + i] * x[r * D + i];
    const inv = 1 / Math.sqrt(ss / D + eps);
    for (let i = 0; i < D; i++) out[r * D + i] = x[r * D + i] * inv * w[i];
  }
  return out;
}

/** dx of RMSNorm (w is frozen): dx = inv * (w*dy - x * inv^2 * mean(w*dy*x)). */
export function rmsnormBackward(x: Arr, w: Arr, eps: number, dy: Arr): Arr {
  const D = w.length;
  const dx = like(x, x.length);
  for (let r = 0; r < x.length / D; r++) {
    const o = r * D;
    let ss = 0;
    let dot = 0;
    for (let i = 0; i < D; i++) {
      ss += x[o + i] * x[o + i];
      dot += w[i] * dy[o + i] * x[o + i];
    }
    const inv = 1 / Math.sqrt(ss / D + eps);
    const c = (inv * inv * inv * dot) / D;
    for (let i = 0; i < D; i++) dx[o + i] = inv * w[i] * dy[o + i] - c * x[o + i];
  }
  return dx;
}

/**
 * dw of RMSNorm, added into `dw` (length D): dw[i] += sum over rows of dy * x * inv, the
 * normalized input times the upstream gradient. Full fine-tuning trains the norm weights.
 */
export function rmsnormWeightGradAdd(dw: Arr, x: Arr, eps: number, dy: Arr): void {
  const D = dw.length;
  for (let r = 0; r < x.length / D; r++) {
    const o = r * D;
    let ss = 0;
    for (let i = 0; i < D; i++) ss += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(ss / D + eps);
    for (let i = 0; i < D; i++) dw[i] += dy[o + i] * x[o + i] * inv;
  }
}
