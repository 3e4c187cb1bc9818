/** silu(gate) * up and its backward on the GPU; the reference is ./swiglu.ts. */
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { mapKernel } from './elementwise.wgsl';

// 1 / (1 + exp(-z)) overflows exp() to +inf for z < -88 and still gives the right limit, 0.
const SIGMOID = 'let s = 1.0 / (1.0 + exp(-g[i]));';

export function siluMulWgsl(rt: Runtime, gate: GpuTensor, up: GpuTensor): GpuTensor {
  const out = rt.alloc(gate.shape);
  mapKernel(
    rt,
    'siluMul',
    [
      { name: 'g', t: gate },
      { name: 'u', t: up },
      { name: 'o', t: out, write: true },
    ],
    `${SIGMOID}
  o[i] = g[i] * s * u[i];`,
  );
  return out;
}

export function siluMulBackwardWgsl(rt: Runtime, gate: GpuTensor, up: GpuTensor, dh: GpuTensor) {
  const dGate = rt.alloc(gate.shape);
  const dUp = rt.alloc(gate.shape);
  mapKernel(
    rt,
    'siluMulBackward',
    [
      { name: 'g', t: gate },
      { name: 'u', t: up },
      { name: 'dh', t: dh },
      { name: 'dg', t: dGate, write: true },
      { name: 'du', t: dUp, write: true },
    ],
    `${SIGMOID}
  du[i] = dh[i] * g[i] * s;
  dg[i] = dh[i] * u[i] * s * (1.0 + g[i] * (1.0 - s));`,
  );
  return { dGate, dUp };
}
