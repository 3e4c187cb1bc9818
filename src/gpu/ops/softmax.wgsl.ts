/**
 * Log-softmax over the vocabulary on the GPU, one workgroup per row (one invocation per row
 * where workgroup memory is slow: RowLanes); the reference is ./softmax.ts. Each invocation
 * folds its strided share of the row into an online triple (max m, s = sum e^(x-m),
 * t = sum e^(x-m)(x-m)), then a workgroup tree merges the triples: log-sum-exp and entropy
 * (H = log s - t/s) need a single pass over the logits.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { FLAT_WORKGROUP, NEG_BIG, Params, RowLanes } from '../webgpu/wgsl';

const LANES = 256;
const P_ROWS = new Params({ rows: 'u32', V: 'u32' });
/** Rows of V logits, each with k targets (row r's at targets[r * k .. r * k + k)). */
const P_MANY = new Params({ rows: 'u32', V: 'u32', k: 'u32' });

const ONLINE = (l: RowLanes) => /* wgsl */ `
struct Online { m: f32, s: f32, t: f32 }
fn merge(a: Online, b: Online) -> Online {
  // An empty side (s = 0) must not bring its sentinel max into the arithmetic.
  if (a.s == 0.0) { return b; }
  if (b.s == 0.0) { return a; }
  let m = max(a.m, b.m);
  let ea = exp(a.m - m);
  let eb = exp(b.m - m);
  return Online(m, a.s * ea + b.s * eb, ea * (a.t + (a.m - m) * a.s) + eb * (b.t + (b.m - m) * b.s));
}
${l.reduce('reduceOnline', 'Online', 'merge')}
/** The row's triple, for rows of logits[o .. o+V). */
fn rowOnline(o: u32, lid: u32, lane: u32) -> Online {
  var acc = Online(${NEG_BIG}, 0.0, 0.0);
  for (var i = lane; i < P.V; i += ${l.lanes}u) { acc = merge(acc, Online(logits[o + i], 1.0, 0.0)); }
  return reduceOnline(lid, acc);
}
`;

const FORWARD = (l: RowLanes) => `${P_ROWS.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
${ONLINE(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let r = rowOnline(o, lid, lane);
  if (lane == 0u) {
    let logS = log(r.s);
    logp[row] = logits[o + u32(targets[row])] - r.m - logS;
    entropy[row] = logS - r.t / r.s;
  }
}`;

const BACKWARD = (l: RowLanes) => `${P_ROWS.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read> dlogp: array<f32>;
@group(0) @binding(4) var<storage, read_write> dlogits: array<f32>;
${ONLINE(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let r = rowOnline(o, lid, lane);
  let lse = r.m + log(r.s);
  let g = dlogp[row];
  let tgt = u32(targets[row]);
  for (var i = lane; i < P.V; i += ${l.lanes}u) {
    dlogits[o + i] = -g * exp(logits[o + i] - lse) + select(0.0, g, i == tgt);
  }
}`;

/** logp[r, j] for each of row r's k targets, from one pass over the row. */
const FORWARD_MANY = (l: RowLanes) => `${P_MANY.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
${ONLINE(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let r = rowOnline(o, lid, lane);
  if (lane == 0u) {
    let lse = r.m + log(r.s);
    for (var j = 0u; j < P.k; j++) {
      let at = row * P.k + j;
      logp[at] = logits[o + u32(targets[at])] - lse;
    }
  }
}`;

/**
 * d(sum_j dlogp[r, j] * logp[r, j]) / dlogits: -G softmax + the targets' own dlogp, G their sum.
 * Each logit looks through the row's k targets itself (k is small), so a target named twice
 * gets both terms without a second pass or a barrier.
 */
const BACKWARD_MANY = (l: RowLanes) => `${P_MANY.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read> dlogp: array<f32>;
@group(0) @binding(4) var<storage, read_write> dlogits: array<f32>;
${ONLINE(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let r = rowOnline(o, lid, lane);
  let lse = r.m + log(r.s);
  let t0 = row * P.k;
  var total = 0.0;
  for (var j = 0u; j < P.k; j++) { total += dlogp[t0 + j]; }
  for (var i = lane; i < P.V; i += ${l.lanes}u) {
    var own = 0.0;
    for (var j = 0u; j < P.k; j++) { own += select(0.0, dlogp[t0 + j], u32(targets[t0 + j]) == i); }
    dlogits[o + i] = -total * exp(logits[o + i] - lse) + own;
  }
}`;

function checkTargets(targets: Int32Array, V: number, op: string): void {
  for (const t of targets) {
    if (t < 0 || t >= V || !Number.isInteger(t)) throw new EngineError(`${op}: target ${t} out of range [0, ${V})`);
  }
}

function rowsOf(logits: GpuTensor, R: number, op: string): number {
  if (R === 0 || logits.size % R !== 0) throw new EngineError(`${op}: ${logits.size} logits are not ${R} rows`);
  return logits.size / R;
}

export function logSoftmaxGatherWgsl(rt: Runtime, logits: GpuTensor, targets: Int32Array) {
  const R = targets.length;
  const V = rowsOf(logits, R, 'logSoftmaxGather');
  checkTargets(targets, V, 'logSoftmaxGather');
  const logp = rt.allocOut([R], 'logSoftmaxGather');
  const entropy = rt.allocOut([R], 'logSoftmaxGather');
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `logSoftmaxGather:${lanes.key}`,
    wgsl: () => FORWARD(lanes),
    params: P_ROWS,
    values: { rows: R, V },
    buffers: [logits.buffer('logSoftmaxGather'), rt.uploadInts(targets), logp.buffer('logSoftmaxGather'), entropy.buffer('logSoftmaxGather')],
    workgroups: lanes.workgroups(R),
  });
  return { logp, entropy };
}

export function logSoftmaxGatherBackwardWgsl(rt: Runtime, logits: GpuTensor, targets: Int32Array, dlogp: GpuTensor): GpuTensor {
  const R = targets.length;
  const V = rowsOf(logits, R, 'logSoftmaxGatherBackward');
  checkTargets(targets, V, 'logSoftmaxGatherBackward');
  const out = rt.allocOut(logits.shape, 'logSoftmaxGatherBackward');
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `logSoftmaxGatherBackward:${lanes.key}`,
    wgsl: () => BACKWARD(lanes),
    params: P_ROWS,
    values: { rows: R, V },
    buffers: [
      logits.buffer('logSoftmaxGatherBackward'),
      rt.uploadInts(targets),
      dlogp.buffer('logSoftmaxGatherBackward'),
      out.buffer('logSoftmaxGatherBackward'),
    ],
    workgroups: lanes.workgroups(R),
  });
  return out;
}

/** Rows of `logits` and their count, for k targets a row. */
function manyRows(logits: GpuTensor, targets: Int32Array, k: number, op: string): { R: number; V: number } {
  if (!Number.isInteger(k) || k < 1 || targets.length % k !== 0) throw new EngineError(`${op}: ${targets.length} targets are not rows of ${k}`);
  const R = targets.length / k;
  const V = rowsOf(logits, R, op);
  checkTargets(targets, V, op);
  return { R, V };
}

/** log p of each row's k targets, [R, k]: one pass over the logits instead of k. */
export function logSoftmaxGatherManyWgsl(rt: Runtime, logits: GpuTensor, targets: Int32Array, k: number): GpuTensor {
  const op = 'logSoftmaxGatherMany';
  const { R, V } = manyRows(logits, targets, k, op);
  const logp = rt.allocOut([R, k], op);
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `${op}:${lanes.key}`,
    wgsl: () => FORWARD_MANY(lanes),
    params: P_MANY,
    values: { rows: R, V, k },
    buffers: [logits.buffer(op), rt.uploadInts(targets), logp.buffer(op)],
    workgroups: lanes.workgroups(R),
  });
  return logp;
}

export function logSoftmaxGatherManyBackwardWgsl(rt: Runtime, logits: GpuTensor, targets: Int32Array, k: number, dlogp: GpuTensor): GpuTensor {
  const op = 'logSoftmaxGatherManyBackward';
  const { R, V } = manyRows(logits, targets, k, op);
  if (dlogp.size !== R * k) throw new EngineError(`${op}: ${dlogp.size} gradients for ${R} rows of ${k} targets`);
  const out = rt.allocOut(logits.shape, op);
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `${op}:${lanes.key}`,
    wgsl: () => BACKWARD_MANY(lanes),
    params: P_MANY,
    values: { rows: R, V, k },
    buffers: [logits.buffer(op), rt.uploadInts(targets), dlogp.buffer(op), out.buffer(op)],
    workgroups: lanes.workgroups(R),
  });
  return out;
}
