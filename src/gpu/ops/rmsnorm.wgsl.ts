/**
 * RMSNorm forward/backward on the GPU; the reference is ./rmsnorm.ts. A row longer than
 * SHORT_ROW gets a workgroup and a tree reduction where workgroup memory is fast; a shorter one
 * (a small model's hidden size, Qwen3's per-head q/k norm) gets one invocation, since a
 * reduction as wide as the workgroup would cost more barriers than the row has elements.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, FLAT_WORKGROUP, Params, RowLanes } from '../webgpu/wgsl';

const LANES = 128;
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
