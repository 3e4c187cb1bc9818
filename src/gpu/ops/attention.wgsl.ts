/**
 * Causal GQA attention over the KV cache on the GPU; the reference is ./attention.ts, whose
 * cache layout [B, numKvHeads, maxT, headDim] (cacheOffset) every kernel here indexes the same
 * way. Query (b, t, h) sits at slot start+t and sees slots padLeft[b]..start+t.
 *
 * Forward has two paths with the same online softmax (running max m, normaliser l, rescaled
 * accumulator): one invocation per (query, head) when there are many queries (prefill), and one
 * workgroup per (query, head) splitting the keys when there are few (decode), so a single
 * decoded token still spreads a long context across many threads.
 *
 * Backward recomputes probabilities (flash-attention style, nothing T x T is stored): a first
 * kernel per (query, head) gives dq plus the row's log-sum-exp and D = sum_j p_j dp_j; a second
 * per (batch, kv head, key slot) loops over the queries that see the key and over the query heads
 * of its group, so dk and dv are summed without atomics.
 */
import type { AttentionShape } from '../backend';
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, MAX_F32, ADD_F32, NEG_BIG, Params, workgroupReduce } from '../webgpu/wgsl';

export const P_ATTN = new Params({
  total: 'u32',
  B: 'u32',
  T: 'u32',
  start: 'u32',
  maxT: 'u32',
  H: 'u32',
  KVH: 'u32',
  scale: 'f32',
});

export function attentionValues(s: AttentionShape, total: number) {
  return {
    total,
    B: s.B,
    T: s.T,
    start: s.start,
    maxT: s.maxT,
    H: s.numHeads,
    KVH: s.numKvHeads,
    scale: 1 / Math.sqrt(s.headDim),
  };
}

/** Index math shared by every kernel: cache row of (b, kv head, slot), as cacheOffset. */
export const CACHE_ROW = (HD: number) => `
fn cacheRow(b: u32, g: u32, slot: u32) -> u32 { return ((b * P.KVH + g) * P.maxT + slot) * ${HD}u; }
`;

/**
 * A head-sized vector in vec4 registers `name0, name1, ...`, unrolled when the kernel is built:
 * private arrays indexed in loops stay in memory on some compilers (SwiftShader's among them),
 * and these kernels touch every element once per key. A head size not divisible by 4 pads the
 * last vec4 with zeros on load and skips the padding on store.
 */
class HeadRegs {
  readonly chunks: number[];
  constructor(readonly HD: number) {
    this.chunks = Array.from({ length: Math.ceil(HD / 4) }, (_, c) => c);
  }

  /** Elements 4c..4c+3 of buf[off ..] as a vec4 expression. */
  load(buf: string, off: string, c: number): string {
    const parts = [0, 1, 2, 3].map((i) => (4 * c + i < this.HD ? `${buf}[${off} + ${4 * c + i}u]` : '0.0'));
    return `vec4<f32>(${parts.join(', ')})`;
  }

  /** `var name<c> = init(c);` for every chunk. */
  decl(name: string, init: (c: number) => string): string {
    return this.chunks.map((c) => `  var ${name}${c} = ${init(c)};`).join('\n');
  }

  /** One statement per chunk. */
  each(stmt: (c: number) => string): string {
    return this.chunks.map((c) => `    ${stmt(c)}`).join('\n');
  }

  /** The sum over chunks of dot(a(c), b(c)). */
  dot(a: (c: number) => string, b: (c: number) => string): string {
    return this.chunks.map((c) => `dot(${a(c)}, ${b(c)})`).join(' + ');
  }

  /** buf[off ..] = name (the valid lanes of every chunk). */
  store(buf: string, off: string, name: string): string {
    const comps = ['x', 'y', 'z', 'w'];
    return this.chunks
      .flatMap((c) => comps.filter((_, i) => 4 * c + i < this.HD).map((comp, i) => `  ${buf}[${off} + ${4 * c + i}u] = ${name}${c}.${comp};`))
      .join('\n');
  }
}

// Bindings 1.. of the kernels below (buffers in attentionWgsl / attentionBackwardWgsl order).
const FORWARD_BINDINGS = `@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kc: array<f32>;
@group(0) @binding(3) var<storage, read> vc: array<f32>;
@group(0) @binding(4) var<storage, read> padLeft: array<i32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;`;
const BACKWARD_INPUTS = `@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kc: array<f32>;
@group(0) @binding(3) var<storage, read> vc: array<f32>;
@group(0) @binding(4) var<storage, read> dO: array<f32>;
@group(0) @binding(5) var<storage, read> padLeft: array<i32>;`;

// ---- forward, one invocation per (query, head) ---------------------------------------------

const PREFILL_WG = 64;
const FORWARD_PREFILL = (HD: number) => {
  const r = new HeadRegs(HD);
  return `${P_ATTN.wgsl}
${FORWARD_BINDINGS}
${CACHE_ROW(HD)}
${FLAT_WORKGROUP}
${entry(PREFILL_WG)}
  let idx = wg * ${PREFILL_WG}u + lid;
  if (idx >= P.total) { return; }
  let h = idx % P.H;
  let bt = idx / P.H;
  let b = bt / P.T;
  let slot = P.start + bt % P.T;
  let lo = u32(padLeft[b]);
  let qo = idx * ${HD}u;
${r.decl('qv', (c) => `${r.load('q', 'qo', c)} * P.scale`)}
${r.decl('acc', () => 'vec4<f32>(0.0)')}
  let g = h / (P.H / P.KVH);
  var m = ${NEG_BIG};
  var l = 0.0;
  for (var j = lo; j <= slot; j++) {
    let ko = cacheRow(b, g, j);
    let s = ${r.dot(
      (c) => `qv${c}`,
      (c) => r.load('kc', 'ko', c),
    )};
    let mNew = max(m, s);
    let c = exp(m - mNew);
    let p = exp(s - mNew);
    l = l * c + p;
${r.each((c) => `acc${c} = acc${c} * c + p * ${r.load('vc', 'ko', c)};`)}
    m = mNew;
  }
  // A query in the padding sees no key: l stays 0 and the row is written as zeros.
  let invL = select(0.0, 1.0 / l, l > 0.0);
${r.each((c) => `acc${c} *= invL;`)}
${r.store('out', 'qo', 'acc')}
}`;
};

// ---- forward, one workgroup per (query, head) ----------------------------------------------

const DECODE_WG = 64;
const FORWARD_DECODE = (HD: number) => {
  const dpt = Math.ceil(HD / DECODE_WG);
  return `${P_ATTN.wgsl}
${FORWARD_BINDINGS}
${CACHE_ROW(HD)}
${MAX_F32}${ADD_F32}
${workgroupReduce('wgMax', 'f32', DECODE_WG, 'maxF32')}
${workgroupReduce('wgSum', 'f32', DECODE_WG, 'addF32')}
var<workgroup> qs: array<f32, ${HD}>;
var<workgroup> ps: array<f32, ${DECODE_WG}>;
${FLAT_WORKGROUP}
${entry(DECODE_WG)}
  // Everything that bounds a loop below derives from the workgroup id, uniforms and read-only
  // storage, so the barriers inside those loops are in uniform control flow.
  if (wg >= P.total) { return; }
  let h = wg % P.H;
  let bt = wg / P.H;
  let b = bt / P.T;
  let slot = P.start + bt % P.T;
  let lo = u32(padLeft[b]);
  let qo = wg * ${HD}u;
  let g = h / (P.H / P.KVH);
  for (var d = lid; d < ${HD}u; d += ${DECODE_WG}u) { qs[d] = q[qo + d] * P.scale; }
  workgroupBarrier();
  var acc: array<f32, ${dpt}>;
  var m = ${NEG_BIG};
  var l = 0.0;
  for (var j0 = lo; j0 <= slot; j0 += ${DECODE_WG}u) {
    let j = j0 + lid;
    var s = ${NEG_BIG};
    if (j <= slot) {
      let ko = cacheRow(b, g, j);
      s = 0.0;
      for (var d = 0u; d < ${HD}u; d++) { s += qs[d] * kc[ko + d]; }
    }
    let mNew = max(m, wgMax(lid, s));
    let p = select(0.0, exp(s - mNew), j <= slot);
    ps[lid] = p;
    let c = exp(m - mNew);
    l = l * c + wgSum(lid, p);
    let count = min(${DECODE_WG}u, slot + 1u - j0);
    for (var e = 0u; e < ${dpt}u; e++) {
      let d = lid + e * ${DECODE_WG}u;
      if (d < ${HD}u) {
        var a = acc[e] * c;
        for (var jj = 0u; jj < count; jj++) { a += ps[jj] * vc[cacheRow(b, g, j0 + jj) + d]; }
        acc[e] = a;
      }
    }
    m = mNew;
    workgroupBarrier();
  }
  let invL = select(0.0, 1.0 / l, l > 0.0);
  for (var e = 0u; e < ${dpt}u; e++) {
    let d = lid + e * ${DECODE_WG}u;
    if (d < ${HD}u) { out[qo + d] = acc[e] * invL; }
  }
}`;
};

// ---- backward ------------------------------------------------------------------------------

/** dq and per-row statistics (lse, D); one invocation per (b, t, h). */
const BACKWARD_DQ = (HD: number) => {
  const r = new HeadRegs(HD);
  const sdp = `    let s = ${r.dot(
    (c) => `qv${c}`,
    (c) => r.load('kc', 'ko', c),
  )};
    let dp = ${r.dot(
      (c) => `dov${c}`,
      (c) => r.load('vc', 'ko', c),
    )};`;
  return `${P_ATTN.wgsl}
${BACKWARD_INPUTS}
@group(0) @binding(6) var<storage, read_write> dq: array<f32>;
@group(0) @binding(7) var<storage, read_write> stats: array<vec2<f32>>;
${CACHE_ROW(HD)}
${FLAT_WORKGROUP}
${entry(PREFILL_WG)}
  let idx = wg * ${PREFILL_WG}u + lid;
  if (idx >= P.total) { return; }
  let h = idx % P.H;
  let bt = idx / P.H;
  let b = bt / P.T;
  let slot = bt % P.T;
  let lo = u32(padLeft[b]);
  let qo = idx * ${HD}u;
  let g = h / (P.H / P.KVH);
${r.decl('qv', (c) => `${r.load('q', 'qo', c)} * P.scale`)}
${r.decl('dov', (c) => r.load('dO', 'qo', c))}
${r.decl('acc', () => 'vec4<f32>(0.0)')}
  // Pass 1: online max, normaliser and sum of e^(s-m) * dp, all rescaled together.
  var m = ${NEG_BIG};
  var l = 0.0;
  var sdp = 0.0;
  for (var j = lo; j <= slot; j++) {
    let ko = cacheRow(b, g, j);
${sdp}
    let mNew = max(m, s);
    let c = exp(m - mNew);
    let p = exp(s - mNew);
    l = l * c + p;
    sdp = sdp * c + p * dp;
    m = mNew;
  }
  let seen = l > 0.0;
  let lse = select(0.0, m + log(l), seen);
  let D = select(0.0, sdp / l, seen);
  // Pass 2: dq = sum_j p_j (dp_j - D) scale k_j.
  for (var j = lo; j <= slot; j++) {
    let ko = cacheRow(b, g, j);
${sdp}
    let ds = exp(s - lse) * (dp - D) * P.scale;
${r.each((c) => `acc${c} += ds * ${r.load('kc', 'ko', c)};`)}
  }
${r.store('dq', 'qo', 'acc')}
  stats[idx] = vec2<f32>(lse, D);
}`;
};

/** dk, dv token-major; one invocation per (b, kv head, key slot). */
const BACKWARD_DKV = (HD: number) => {
  const r = new HeadRegs(HD);
  return `${P_ATTN.wgsl}
${BACKWARD_INPUTS}
@group(0) @binding(6) var<storage, read> stats: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> dk: array<f32>;
@group(0) @binding(8) var<storage, read_write> dv: array<f32>;
${CACHE_ROW(HD)}
${FLAT_WORKGROUP}
${entry(PREFILL_WG)}
  let idx = wg * ${PREFILL_WG}u + lid;
  if (idx >= P.total) { return; }
  let j = idx % P.T;
  let g = (idx / P.T) % P.KVH;
  let b = idx / (P.T * P.KVH);
  let lo = u32(padLeft[b]);
  let ko = cacheRow(b, g, j);
${r.decl('kv', (c) => r.load('kc', 'ko', c))}
${r.decl('vv', (c) => r.load('vc', 'ko', c))}
${r.decl('dka', () => 'vec4<f32>(0.0)')}
${r.decl('dva', () => 'vec4<f32>(0.0)')}
  let group = P.H / P.KVH;
  // Keys in the padding are never attended; their gradients stay zero.
  let first = select(P.T, j, j >= lo);
  for (var t = first; t < P.T; t++) {
    for (var hh = 0u; hh < group; hh++) {
      let row = (b * P.T + t) * P.H + g * group + hh;
      let qo = row * ${HD}u;
${r.each((c) => `let q${c} = ${r.load('q', 'qo', c)};`).replace(/^ {4}/gm, '      ')}
${r.each((c) => `let do${c} = ${r.load('dO', 'qo', c)};`).replace(/^ {4}/gm, '      ')}
      let s = ${r.dot(
        (c) => `q${c}`,
        (c) => `kv${c}`,
      )};
      let dp = ${r.dot(
        (c) => `do${c}`,
        (c) => `vv${c}`,
      )};
      let st = stats[row];
      let p = exp(s * P.scale - st.x);
      let ds = p * (dp - st.y) * P.scale;
${r.each((c) => `dva${c} += p * do${c}; dka${c} += ds * q${c};`).replace(/^ {4}/gm, '      ')}
    }
  }
  let out = ((b * P.T + j) * P.KVH + g) * ${HD}u;
${r.store('dk', 'out', 'dka')}
${r.store('dv', 'out', 'dva')}
}`;
};

// ---- dispatch ------------------------------------------------------------------------------

export const cacheSize = (s: AttentionShape) => s.B * s.numKvHeads * s.maxT * s.headDim;

/** Checks the shape and, when given, that each tensor has the size the shape implies. */
export function checkAttentionShape(s: AttentionShape, op: string, sizes: [GpuTensor, number, string][] = []): void {
  for (const [t, n, what] of sizes) {
    if (t.size !== n) throw new EngineError(`${op}: ${what} has ${t.size} elements, the attention shape needs ${n}`);
  }
  if (s.numHeads % s.numKvHeads !== 0) {
    throw new EngineError(`${op}: numHeads ${s.numHeads} is not a multiple of numKvHeads ${s.numKvHeads}`);
  }
  if (s.padLeft.length !== s.B) throw new EngineError(`${op}: padLeft has ${s.padLeft.length} entries for B = ${s.B}`);
  if (s.start + s.T > s.maxT) throw new EngineError(`${op}: slots ${s.start}..${s.start + s.T - 1} exceed maxT ${s.maxT}`);
}

/** When the workgroup-per-query path runs (see attentionWgsl). */
export interface AttentionPaths {
  /** At most this many (query, head) pairs... */
  decodeMaxQueries: number;
  /** ...over more than this many key slots. */
  decodeMinKeys: number;
}

/**
 * The workgroup-per-query path spreads a long context over a workgroup when there are few
 * queries to occupy the GPU. With no more slots than the workgroup has invocations, each would
 * hold at most one key and the reductions would be pure overhead, so short contexts (and many
 * queries) take the invocation-per-query path.
 */
export const DEFAULT_ATTENTION_PATHS: AttentionPaths = { decodeMaxQueries: 1024, decodeMinKeys: DECODE_WG };

export function attentionWgsl(rt: Runtime, q: GpuTensor, k: GpuTensor, v: GpuTensor, s: AttentionShape, paths: AttentionPaths): GpuTensor {
  checkAttentionShape(s, 'attention', [
    [q, s.B * s.T * s.numHeads * s.headDim, 'q'],
    [k, cacheSize(s), 'the k cache'],
    [v, cacheSize(s), 'the v cache'],
  ]);
  const out = rt.allocOut(q.shape, 'attention');
  const total = s.B * s.T * s.numHeads;
  if (total === 0) return out;
  const decode = total <= paths.decodeMaxQueries && s.start + s.T > paths.decodeMinKeys;
  const HD = s.headDim;
  rt.dispatch({
    key: `attention:${decode ? 'decode' : 'prefill'}:${HD}`,
    wgsl: () => (decode ? FORWARD_DECODE(HD) : FORWARD_PREFILL(HD)),
    params: P_ATTN,
    values: attentionValues(s, total),
    buffers: [q.buffer('attention'), k.buffer('attention'), v.buffer('attention'), rt.uploadInts(s.padLeft), out.buffer('attention')],
    workgroups: decode ? total : Math.ceil(total / PREFILL_WG),
  });
  return out;
}

export function attentionBackwardWgsl(rt: Runtime, q: GpuTensor, k: GpuTensor, v: GpuTensor, dOut: GpuTensor, s: AttentionShape) {
  checkAttentionShape(s, 'attentionBackward', [
    [q, s.B * s.T * s.numHeads * s.headDim, 'q'],
    [dOut, s.B * s.T * s.numHeads * s.headDim, 'dOut'],
    [k, cacheSize(s), 'k'],
    [v, cacheSize(s), 'v'],
  ]);
  if (s.start !== 0 || s.maxT !== s.T) {
    throw new EngineError(`attentionBackward: needs start = 0 and maxT = T (training has no cache), got start ${s.start}, maxT ${s.maxT}`);
  }
  const HD = s.headDim;
  const kvShape = [s.B * s.T, s.numKvHeads * HD];
  const dq = rt.allocOut(q.shape, 'attentionBackward');
  const dk = rt.allocOut(kvShape, 'attentionBackward');
  const dv = rt.allocOut(kvShape, 'attentionBackward');
  const rows = s.B * s.T * s.numHeads;
  if (rows === 0) return { dq, dk, dv };
  const stats = rt.allocOut([rows, 2], 'attentionBackward');
  const pad = rt.uploadInts(s.padLeft);
  const [qb, kb, vb, db] = [q, k, v, dOut].map((t) => t.buffer('attentionBackward'));
  rt.dispatch({
    key: `attentionBackwardDq:${HD}`,
    wgsl: () => BACKWARD_DQ(HD),
    params: P_ATTN,
    values: attentionValues(s, rows),
    buffers: [qb, kb, vb, db, pad, dq.buffer('attentionBackward'), stats.buffer('attentionBackward')],
    workgroups: Math.ceil(rows / PREFILL_WG),
  });
  const keys = s.B * s.numKvHeads * s.T;
  rt.dispatch({
    key: `attentionBackwardDkv:${HD}`,
    wgsl: () => BACKWARD_DKV(HD),
    params: P_ATTN,
    values: attentionValues(s, keys),
    buffers: [qb, kb, vb, db, pad, stats.buffer('attentionBackward'), dk.buffer('attentionBackward'), dv.buffer('attentionBackward')],
    workgroups: Math.ceil(keys / PREFILL_WG),
  });
  rt.free(stats);
  return { dq, dk, dv };
}
