/**
 * RMSNorm forward/backward on the GPU; the reference is ./rmsnorm.ts. A row longer than
 * ROW_MAX gets a workgroup and a tree reduction; a shorter one (a small model's hidden size,
 * Qwen3's per-head q/k norm) gets one invocation, since a reduction as wide as the workgroup
 * would cost more barriers than the row has elements.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, entry, FLAT_WORKGROUP, Params, workgroupReduce } from '../webgpu/wgsl';

const WG = 128;
const ROW_MAX = 256;
const ROW_WG = 64;
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

const FORWARD_ROW = () => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
${FLAT_WORKGROUP}
${entry(ROW_WG)}
  let r = wg * ${ROW_WG}u + lid;
  if (r >= P.rows) { return; }
  let o = r * P.D;
  var ss = 0.0;
  for (var i = 0u; i < P.D; i++) { ss += x[o + i] * x[o + i]; }
  let inv = inverseSqrt(ss / f32(P.D) + P.eps);
  for (var i = 0u; i < P.D; i++) { y[o + i] = x[o + i] * inv * w[i]; }
}`;

const BACKWARD_ROW = () => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
${FLAT_WORKGROUP}
${entry(ROW_WG)}
  let r = wg * ${ROW_WG}u + lid;
  if (r >= P.rows) { return; }
  let o = r * P.D;
  var s = vec2<f32>(0.0);
  for (var i = 0u; i < P.D; i++) { s += vec2<f32>(x[o + i] * x[o + i], w[i] * dy[o + i] * x[o + i]); }
  let inv = inverseSqrt(s.x / f32(P.D) + P.eps);
  let c = inv * inv * inv * s.y / f32(P.D);
  for (var i = 0u; i < P.D; i++) { dx[o + i] = inv * w[i] * dy[o + i] - c * x[o + i]; }
}`;

/** The kernel for rows of width D: its WGSL, pipeline key and workgroup count for R rows. */
function pick(D: number, R: number, wide: () => string, row: () => string, name: string) {
  return D > ROW_MAX ? { key: name, wgsl: wide, workgroups: R } : { key: `${name}:row`, wgsl: row, workgroups: Math.ceil(R / ROW_WG) };
}

function rows(x: GpuTensor, w: GpuTensor, op: string): number {
  if (x.size % w.size !== 0) throw new EngineError(`${op}: width ${w.size} does not divide ${x.size} elements`);
  return x.size / w.size;
}

export function rmsnormWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number): GpuTensor {
  const y = rt.allocOut(x.shape, 'rmsnorm');
  const R = rows(x, w, 'rmsnorm');
  if (R > 0) {
    rt.dispatch({
      ...pick(w.size, R, FORWARD, FORWARD_ROW, 'rmsnorm'),
      params: P_NORM,
      values: { rows: R, D: w.size, eps },
      buffers: [x.buffer('rmsnorm'), w.buffer('rmsnorm'), y.buffer('rmsnorm')],
    });
  }
  return y;
}

export function rmsnormBackwardWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number, dy: GpuTensor): GpuTensor {
  const dx = rt.allocOut(x.shape, 'rmsnormBackward');
  const R = rows(x, w, 'rmsnormBackward');
  if (R > 0) {
    rt.dispatch({
      ...pick(w.size, R, BACKWARD, BACKWARD_ROW, 'rmsnormBackward'),
      params: P_NORM,
      values: { rows: R, D: w.size, eps },
      buffers: [x.buffer('rmsnormBackward'), w.buffer('rmsnormBackward'), dy.buffer('rmsnormBackward'), dx.buffer('rmsnormBackward')],
    });
  }
  return dx;
}
