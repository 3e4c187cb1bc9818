/**
 * The reverse-KL term over the whole vocabulary on the GPU, one workgroup per row (one invocation
 * per row where workgroup memory is slow: RowLanes); the reference is ./reverse-kl.ts. A row's
 * log-sum-exp is an online (max, sum) pair merged over the lanes, then KL = sum p (log p - log q)
 * is a second pass over the row, and the backward a third that writes p (log p - log q - KL) * dkl.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, FLAT_WORKGROUP, NEG_BIG, Params, RowLanes } from '../webgpu/wgsl';

const LANES = 256;
const P_ROWS = new Params({ rows: 'u32', V: 'u32' });

const ROW = (l: RowLanes) => /* wgsl */ `
struct MaxSum { m: f32, s: f32 }
fn mergeMaxSum(a: MaxSum, b: MaxSum) -> MaxSum {
  // An empty side (s = 0) must not bring its sentinel max into the arithmetic.
  if (a.s == 0.0) { return b; }
  if (b.s == 0.0) { return a; }
  let m = max(a.m, b.m);
  return MaxSum(m, a.s * exp(a.m - m) + b.s * exp(b.m - m));
}
${l.reduce('reduceMaxSum', 'MaxSum', 'mergeMaxSum')}
${ADD_F32}
${l.reduce('reduceSum', 'f32', 'addF32')}
fn rowLse(o: u32, lid: u32, lane: u32) -> f32 {
  var acc = MaxSum(${NEG_BIG}, 0.0);
  for (var i = lane; i < P.V; i += ${l.lanes}u) { acc = mergeMaxSum(acc, MaxSum(logits[o + i], 1.0)); }
  let r = reduceMaxSum(lid, acc);
  return r.m + log(r.s);
}
/** p log p - p log q of one entry; 0 where p underflows, so a teacher's -inf there stays harmless. */
fn klPart(lp: f32, lq: f32) -> f32 {
  let p = exp(lp);
  if (p > 0.0) { return p * (lp - lq); }
  return 0.0;
}
fn rowKl(o: u32, lid: u32, lane: u32, lse: f32) -> f32 {
  var acc = 0.0;
  for (var i = lane; i < P.V; i += ${l.lanes}u) { acc += klPart(logits[o + i] - lse, teacher[o + i]); }
  return reduceSum(lid, acc);
}
`;

const FORWARD = (l: RowLanes) => `${P_ROWS.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> teacher: array<f32>;
@group(0) @binding(3) var<storage, read_write> kl: array<f32>;
${ROW(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let r = rowKl(o, lid, lane, rowLse(o, lid, lane));
  if (lane == 0u) { kl[row] = r; }
}`;

const BACKWARD = (l: RowLanes) => `${P_ROWS.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> teacher: array<f32>;
@group(0) @binding(3) var<storage, read> dkl: array<f32>;
@group(0) @binding(4) var<storage, read_write> dlogits: array<f32>;
${ROW(l)}
${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let lse = rowLse(o, lid, lane);
  let k = rowKl(o, lid, lane, lse);
  let g = dkl[row];
  for (var i = lane; i < P.V; i += ${l.lanes}u) {
    let lp = logits[o + i] - lse;
    let p = exp(lp);
    dlogits[o + i] = select(0.0, g * p * (lp - teacher[o + i] - k), p > 0.0);
  }
}`;

function shapeOf(logits: GpuTensor, teacher: GpuTensor, op: string): { R: number; V: number } {
  if (logits.shape.length !== 2) throw new EngineError(`${op}: logits must be [rows, vocabulary], got [${logits.shape}]`);
  const [R, V] = logits.shape;
  if (teacher.size !== logits.size) throw new EngineError(`${op}: ${teacher.size} teacher log-probs for ${logits.size} logits; give one per logit`);
  return { R, V };
}

/** KL_r of every row of logits [R, V] against the teacher's log-probs [R, V] -> [R]. */
export function reverseKlWgsl(rt: Runtime, logits: GpuTensor, teacher: GpuTensor): GpuTensor {
  const op = 'reverseKl';
  const { R, V } = shapeOf(logits, teacher, op);
  const out = rt.allocOut([R], op);
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `${op}:${lanes.key}`,
    wgsl: () => FORWARD(lanes),
    params: P_ROWS,
    values: { rows: R, V },
    buffers: [logits.buffer(op), teacher.buffer(op), out.buffer(op)],
    workgroups: lanes.workgroups(R),
  });
  return out;
}

/** d(sum_r dkl[r] * KL_r) / d logits: [R, V]. */
export function reverseKlBackwardWgsl(rt: Runtime, logits: GpuTensor, teacher: GpuTensor, dkl: GpuTensor): GpuTensor {
  const op = 'reverseKlBackward';
  const { R, V } = shapeOf(logits, teacher, op);
  if (dkl.size !== R) throw new EngineError(`${op}: ${dkl.size} row gradients for ${R} rows`);
  const out = rt.allocOut(logits.shape, op);
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, LANES);
  rt.dispatch({
    key: `${op}:${lanes.key}`,
    wgsl: () => BACKWARD(lanes),
    params: P_ROWS,
    values: { rows: R, V },
    buffers: [logits.buffer(op), teacher.buffer(op), dkl.buffer(op), out.buffer(op)],
    workgroups: lanes.workgroups(R),
  });
  return out;
}
