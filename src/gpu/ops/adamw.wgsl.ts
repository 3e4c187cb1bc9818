/** AdamW in place on the GPU; the reference is ./adamw.ts (same operation order). */
import type { AdamWParams } from '../backend';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { Params } from '../webgpu/wgsl';
import { mapKernel } from './elementwise.wgsl';

const ADAMW = new Params({
  n: 'u32',
  lr: 'f32',
  beta1: 'f32',
  beta2: 'f32',
  eps: 'f32',
  weightDecay: 'f32',
  bc1: 'f32',
  bc2: 'f32',
  gradScale: 'f32',
});

export function adamwWgsl(rt: Runtime, param: GpuTensor, grad: GpuTensor, m: GpuTensor, v: GpuTensor, p: AdamWParams): void {
  // Bias corrections in f64 on the host: beta2^step loses digits in f32 for long runs.
  const values = {
    lr: p.lr,
    beta1: p.beta1,
    beta2: p.beta2,
    eps: p.eps,
    weightDecay: p.weightDecay,
    bc1: 1 - Math.pow(p.beta1, p.step),
    bc2: 1 - Math.pow(p.beta2, p.step),
    gradScale: p.gradScale,
  };
  mapKernel(
    rt,
    'adamw',
    [
      { name: 'w', t: param, write: true },
      { name: 'g', t: grad },
      { name: 'm', t: m, write: true },
      { name: 'v', t: v, write: true },
    ],
    `let gs = g[i] * P.gradScale;
  let mi = P.beta1 * m[i] + (1.0 - P.beta1) * gs;
  let vi = P.beta2 * v[i] + (1.0 - P.beta2) * gs * gs;
  m[i] = mi;
  v[i] = vi;
  var wi = w[i] - P.lr * P.weightDecay * w[i];
  wi = wi - (P.lr * (mi / P.bc1)) / (sqrt(vi / P.bc2) + P.eps);
  w[i] = wi;`,
    { params: ADAMW, values },
  );
}
