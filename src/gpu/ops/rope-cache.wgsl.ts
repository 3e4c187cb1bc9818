/**
 * One layer's attention inputs in one dispatch: RoPE on q (a new tensor) and on k, and k and v
 * stored into the KV caches at the batch's slots: rope twice and two cache writes
 * (ops/attention.ts writeCacheForward; the CPU reference composes those) in one launch, not four:
 * a decode step is short enough that launches, not arithmetic, bound it.
 */
import type { AttentionShape } from '../backend';
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, Params } from '../webgpu/wgsl';
import { CACHE_ROW, cacheSize, checkAttentionShape } from './attention.wgsl';
import { ropeTable } from './rope.wgsl';

const WG = 64;
const P_RC = new Params({ qHeads: 'u32', kHeads: 'u32', T: 'u32', start: 'u32', maxT: 'u32', H: 'u32', KVH: 'u32' });

// One invocation per head of a token: invocations [0, qHeads) rotate a q head, the next kHeads
// rotate a k head into the cache and copy the matching v head (a small model's head is a few
// pairs, and an invocation per pair cost more in index arithmetic than in rotation).
const ROPE_CACHE = (HD: number) => {
  const half = HD / 2;
  return `${P_RC.wgsl}
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> positions: array<i32>;
@group(0) @binding(5) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> qOut: array<f32>;
@group(0) @binding(7) var<storage, read_write> kc: array<f32>;
@group(0) @binding(8) var<storage, read_write> vc: array<f32>;
${CACHE_ROW(HD)}
// Pair (a, b) of a head rotated by the angle whose cos and sin are cs.
fn rotate(a: f32, b: f32, cs: vec2<f32>) -> vec2<f32> { return vec2<f32>(a * cs.x - b * cs.y, b * cs.x + a * cs.y); }
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.qHeads + P.kHeads) { return; }
  let isQ = idx < P.qHeads;
  let head = select(idx - P.qHeads, idx, isQ);
  let n = head / select(P.KVH, P.H, isQ);
  // cos and sin rows of the token's angle (negative positions read |pos|'s row, as rope does).
  let pos = positions[n];
  let tab = u32(abs(pos)) * ${half}u;
  let flip = vec2<f32>(1.0, select(1.0, -1.0, pos < 0));
  let o = head * ${HD}u;
  if (isQ) {
    for (var i = 0u; i < ${half}u; i++) {
      let r = rotate(q[o + i], q[o + i + ${half}u], table[tab + i] * flip);
      qOut[o + i] = r.x;
      qOut[o + i + ${half}u] = r.y;
    }
  } else {
    let c = cacheRow(n / P.T, head % P.KVH, P.start + n % P.T);
    for (var i = 0u; i < ${half}u; i++) {
      let r = rotate(k[o + i], k[o + i + ${half}u], table[tab + i] * flip);
      kc[c + i] = r.x;
      kc[c + i + ${half}u] = r.y;
    }
    for (var d = 0u; d < ${HD}u; d++) { vc[c + d] = v[o + d]; }
  }
}`;
};

export function ropeWriteCacheWgsl(
  rt: Runtime,
  x: { q: GpuTensor; k: GpuTensor; v: GpuTensor; kCache: GpuTensor; vCache: GpuTensor },
  positions: Int32Array,
  theta: number,
  s: AttentionShape,
): GpuTensor {
  const HD = s.headDim;
  if (HD % 2 !== 0) throw new EngineError(`ropeWriteCache: headDim ${HD} must be even`);
  const N = s.B * s.T;
  if (positions.length !== N) throw new EngineError(`ropeWriteCache: ${positions.length} positions for ${N} tokens`);
  const kv = N * s.numKvHeads * HD;
  checkAttentionShape(s, 'ropeWriteCache', [
    [x.q, N * s.numHeads * HD, 'q'],
    [x.k, kv, 'k'],
    [x.v, kv, 'v'],
    [x.kCache, cacheSize(s), 'the k cache'],
    [x.vCache, cacheSize(s), 'the v cache'],
  ]);
  const qOut = rt.allocOut(x.q.shape, 'ropeWriteCache');
  if (N === 0) return qOut;
  let maxPos = 0;
  for (const p of positions) maxPos = Math.max(maxPos, Math.abs(p));
  const table = ropeTable(rt, HD, theta, maxPos);
  const values = { qHeads: N * s.numHeads, kHeads: N * s.numKvHeads, T: s.T, start: s.start, maxT: s.maxT, H: s.numHeads, KVH: s.numKvHeads };
  const op = 'ropeWriteCache';
  rt.dispatch({
    key: `ropeWriteCache:${HD}`,
    wgsl: () => ROPE_CACHE(HD),
    params: P_RC,
    values,
    buffers: [
      x.q.buffer(op),
      x.k.buffer(op),
      x.v.buffer(op),
      rt.uploadInts(positions),
      table.buffer(op),
      qOut.buffer(op),
      x.kCache.buffer(op),
      x.vCache.buffer(op),
    ],
    workgroups: Math.ceil((values.qHeads + values.kHeads) / WG),
  });
  return qOut;
}
