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

const WG = 256;
const P_RC = new Params({ qPairs: 'u32', kPairs: 'u32', vElems: 'u32', T: 'u32', start: 'u32', maxT: 'u32', H: 'u32', KVH: 'u32' });

// Invocations [0, qPairs) rotate q pairs, the next kPairs rotate k pairs into the cache, the
// last vElems copy v; the three ranges are contiguous, so only boundary workgroups diverge.
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
// cos and sin of row n's angle for pair i (negative positions read |pos|'s row, as rope does).
fn angle(n: u32, i: u32) -> vec2<f32> {
  let pos = positions[n];
  let cs = table[u32(abs(pos)) * ${half}u + i];
  return vec2<f32>(cs.x, select(cs.y, -cs.y, pos < 0));
}
fn slotRow(n: u32, g: u32) -> u32 { return cacheRow(n / P.T, g, P.start + n % P.T); }
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx < P.qPairs) {
    let i = idx % ${half}u;
    let n = idx / (${half}u * P.H);
    let o = (idx / ${half}u) * ${HD}u + i;
    let cs = angle(n, i);
    let a = q[o];
    let b = q[o + ${half}u];
    qOut[o] = a * cs.x - b * cs.y;
    qOut[o + ${half}u] = b * cs.x + a * cs.y;
  } else if (idx < P.qPairs + P.kPairs) {
    let j = idx - P.qPairs;
    let i = j % ${half}u;
    let g = (j / ${half}u) % P.KVH;
    let n = j / (${half}u * P.KVH);
    let o = (j / ${half}u) * ${HD}u + i;
    let cs = angle(n, i);
    let a = k[o];
    let b = k[o + ${half}u];
    let c = slotRow(n, g) + i;
    kc[c] = a * cs.x - b * cs.y;
    kc[c + ${half}u] = b * cs.x + a * cs.y;
  } else if (idx < P.qPairs + P.kPairs + P.vElems) {
    let j = idx - P.qPairs - P.kPairs;
    vc[slotRow(j / (${HD}u * P.KVH), (j / ${HD}u) % P.KVH) + j % ${HD}u] = v[j];
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
  const values = { qPairs: (N * s.numHeads * HD) / 2, kPairs: kv / 2, vElems: kv, T: s.T, start: s.start, maxT: s.maxT, H: s.numHeads, KVH: s.numKvHeads };
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
    workgroups: Math.ceil((values.qPairs + values.kPairs + values.vElems) / WG),
  });
  return qOut;
}
