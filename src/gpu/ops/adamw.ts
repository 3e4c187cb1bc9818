import type { AdamWParams } from '../backend';
import type { Arr } from './types';

/** Decoupled weight decay (Loshchilov & Hutter), bias-corrected moments, as torch.optim.AdamW. */
export function adamwUpdate(param: Arr, grad: Arr, m: Arr, v: Arr, p: AdamWParams): void {
  const bc1 = 1 - Math.pow(p.beta1, p.step);
  const bc2 = 1 - Math.pow(p.beta2, p.step);
  for (let i = 0; i < param.length; i++) {
    const g = grad[i] * p.gradScale;
    m[i] = p.beta1 * m[i] + (1 - p.beta1) * g;
    v[i] = p.beta2 * v[i] + (1 - p.beta2) * g * g;
    param[i] -= p.lr * p.weightDecay * param[i];
    param[i] -= (p.lr * (m[i] / bc1)) / (Math.sqrt(v[i] / bc2) + p.eps);
  }
}
