/** RMSNorm forward/backward on the GPU, one workgroup per row; the reference is ./rmsnorm.ts. */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, entry, FLAT_WORKGROUP, Params, workgroupReduce } from '../webgpu/wgsl';

const WG = 128;
const P_NORM = new Params({ rows: 'u32', D: 'u32', eps: 'f32' });

const FORWARD = () => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
${ADD_F32}${workgroupReduce('sum', 'f32', WG, 'addF32')}
${FLAT_WORKGROUP}
${entry(WG)}
  if (wg >= P.rows) { return; }
  let o = wg * P.D;
  var ss = 0.0;
  for (var i = lid; i < P.D; i += ${WG}u) { ss += x[o + i] * x[o + i]; }
  let inv = inverseSqrt(sum(lid, ss) / f32(P.D) + P.eps);
  for (var i = lid; i < P.D; i += ${WG}u) { y[o + i] = x[o + i] * inv * w[i]; }
}`;

// Both row sums (x.x and w*dy.x) travel in one vec2 reduction: half the barriers.
const BACKWARD = () => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
fn addV2(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return a + b; }
${workgroupReduce('sum2', 'vec2<f32>', WG, 'addV2')}
${FLAT_WORKGROUP}
${entry(WG)}
  if (wg >= P.rows) { return; }
  let o = wg * P.D;
  var acc = vec2<f32>(0.0);
  for (var i = lid; i < P.D; i += ${WG}u) {
    let xi = x[o + i];
    acc += vec2<f32>(xi * xi, w[i] * dy[o + i] * xi);
  }
  let s = sum2(lid, acc);
  let inv = inverseSqrt(s.x / f32(P.D) + P.eps);
  let c = inv * inv * inv * s.y / f32(P.D);
  for (var i = lid; i < P.D; i += ${WG}u) { dx[o + i] = inv * w[i] * dy[o + i] - c * x[o + i]; }
}`;

function rows(x: GpuTensor, w: GpuTensor, op: string): number {
  if (x.size % w.size !== 0) throw new EngineError(`${op}: width ${w.size} does not divide ${x.size} elements`);
  return x.size / w.size;
}

export function rmsnormWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number): GpuTensor {
  const y = rt.allocOut(x.shape, 'rmsnorm');
  const R = rows(x, w, 'rmsnorm');
  if (R > 0) {
    rt.dispatch({
      key: 'rmsnorm',
      wgsl: FORWARD,
      params: P_NORM,
      values: { rows: R, D: w.size, eps },
      buffers: [x.buffer('rmsnorm'), w.buffer('rmsnorm'), y.buffer('rmsnorm')],
      workgroups: R,
    });
  }
  return y;
}

export function rmsnormBackwardWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number, dy: GpuTensor): GpuTensor {
  const dx = rt.allocOut(x.shape, 'rmsnormBackward');
  const R = rows(x, w, 'rmsnormBackward');
  if (R > 0) {
    rt.dispatch({
      key: 'rmsnormBackward',
      wgsl: BACKWARD,
      params: P_NORM,
      values: { rows: R, D: w.size, eps },
      buffers: [x.buffer('rmsnormBackward'), w.buffer('rmsnormBackward'), dy.buffer('rmsnormBackward'), dx.buffer('rmsnormBackward')],
      workgroups: R,
    });
  }
  return dx;
}
