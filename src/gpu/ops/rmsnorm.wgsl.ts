/**
 * RMSNorm forward/backward on the GPU; the reference is ./rmsnorm.ts. A row longer than
 * SHORT_ROW gets a workgroup and a tree reduction where workgroup memory is fast; a shorter one
 * (a small model's hidden size, Qwen3's per-head q/k norm) gets one invocation, since a
 * reduction as wide as the workgroup would cost more barriers than the row has elements.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, entry, FLAT_WORKGROUP, Params, RowLanes } from '../webgpu/wgsl';

const LANES = 128;
const WG_FLAT = 64;
const SHORT_ROW = 256;
const P_NORM = new Params({ rows: 'u32', D: 'u32', eps: 'f32' });

const FORWARD = (l: RowLanes) => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
${ADD_F32}${l.reduce('sum', 'f32', 'addF32')}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.D;
  var ss = 0.0;
  for (var i = lane; i < P.D; i += ${l.lanes}u) { ss += x[o + i] * x[o + i]; }
  let inv = inverseSqrt(sum(lid, ss) / f32(P.D) + P.eps);
  for (var i = lane; i < P.D; i += ${l.lanes}u) { y[o + i] = x[o + i] * inv * w[i]; }
}`;

// Both row sums (x.x and w*dy.x) travel in one vec2 reduction: half the barriers.
const BACKWARD = (l: RowLanes) => `${P_NORM.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
fn addV2(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return a + b; }
${l.reduce('sum2', 'vec2<f32>', 'addV2')}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.D;
  var acc = vec2<f32>(0.0);
  for (var i = lane; i < P.D; i += ${l.lanes}u) {
    let xi = x[o + i];
    acc += vec2<f32>(xi * xi, w[i] * dy[o + i] * xi);
  }
  let s = sum2(lid, acc);
  let inv = inverseSqrt(s.x / f32(P.D) + P.eps);
  let c = inv * inv * inv * s.y / f32(P.D);
  for (var i = lane; i < P.D; i += ${l.lanes}u) { dx[o + i] = inv * w[i] * dy[o + i] - c * x[o + i]; }
}`;

function rows(x: GpuTensor, w: GpuTensor, op: string): number {
  if (x.size % w.size !== 0) throw new EngineError(`${op}: width ${w.size} does not divide ${x.size} elements`);
  return x.size / w.size;
}

/** One dispatch of `kernel` over the rows of x (row width w.size); `y` is the output. */
function run(rt: Runtime, op: string, kernel: (l: RowLanes) => string, x: GpuTensor, w: GpuTensor, eps: number, inputs: GpuTensor[]): GpuTensor {
  const y = rt.allocOut(x.shape, op);
  const R = rows(x, w, op);
  if (R > 0) {
    const lanes = RowLanes.choose(rt.options.workgroupMemory, w.size, LANES, SHORT_ROW);
    rt.dispatch({
      key: `${op}:${lanes.key}`,
      wgsl: () => kernel(lanes),
      params: P_NORM,
      values: { rows: R, D: w.size, eps },
      buffers: [...inputs.map((t) => t.buffer(op)), y.buffer(op)],
      workgroups: lanes.workgroups(R),
    });
  }
  return y;
}

export function rmsnormWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number): GpuTensor {
  return run(rt, 'rmsnorm', FORWARD, x, w, eps, [x, w]);
}

export function rmsnormBackwardWgsl(rt: Runtime, x: GpuTensor, w: GpuTensor, eps: number, dy: GpuTensor): GpuTensor {
  return run(rt, 'rmsnormBackward', BACKWARD, x, w, eps, [x, w, dy]);
}

const P_WGRAD = new Params({ rows: 'u32', D: 'u32', eps: 'f32' });

// Pass 1: each row's 1 / rms, one invocation per row.
const ROW_INV = () => `${P_WGRAD.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> inv: array<f32>;
${FLAT_WORKGROUP}
${entry(WG_FLAT)}
  let r = wg * ${WG_FLAT}u + lid;
  if (r >= P.rows) { return; }
  var ss = 0.0;
  for (var i = 0u; i < P.D; i++) { let xi = x[r * P.D + i]; ss += xi * xi; }
  inv[r] = inverseSqrt(ss / f32(P.D) + P.eps);
}`;

// Pass 2: dw[i] += sum over rows of dy * x * inv, one invocation per column (rows in order).
const WEIGHT_GRAD = () => `${P_WGRAD.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read> inv: array<f32>;
@group(0) @binding(4) var<storage, read_write> dw: array<f32>;
${FLAT_WORKGROUP}
${entry(WG_FLAT)}
  let i = wg * ${WG_FLAT}u + lid;
  if (i >= P.D) { return; }
  var acc = 0.0;
  for (var r = 0u; r < P.rows; r++) { acc += dy[r * P.D + i] * x[r * P.D + i] * inv[r]; }
  dw[i] += acc;
}`;

/** dw += d/dw of RMSNorm (the reference is rmsnormWeightGradAdd in ./rmsnorm.ts). */
export function rmsnormWeightGradWgsl(rt: Runtime, dw: GpuTensor, x: GpuTensor, eps: number, dy: GpuTensor): void {
  const op = 'rmsnormWeightGrad';
  if (dy.size !== x.size) throw new EngineError(`${op}: dy [${dy.shape}] does not match x [${x.shape}]`);
  const R = rows(x, dw, op);
  if (R === 0) return;
  const inv = rt.allocOut([R], op);
  const values = { rows: R, D: dw.size, eps };
  rt.dispatch({ key: `${op}:inv`, wgsl: ROW_INV, params: P_WGRAD, values, buffers: [x.buffer(op), inv.buffer(op)], workgroups: Math.ceil(R / WG_FLAT) });
  rt.dispatch({
    key: `${op}:cols`,
    wgsl: WEIGHT_GRAD,
    params: P_WGRAD,
    values,
    buffers: [x.buffer(op), dy.buffer(op), inv.buffer(op), dw.buffer(op)],
    workgroups: Math.ceil(dw.size / WG_FLAT),
  });
  rt.free(inv);
}
