/**
 * The next token of every row on the GPU, one workgroup per row; the definition and the CPU
 * reference are in ./sample.ts. Only two numbers per row (id, raw log-prob) cross back to the
 * host, so sampled decoding reads no logits, and the vocabulary is never sorted:
 *
 * - one pass gives the row's max, its first index (greedy) and the log-sum-exp;
 * - top-k and top-p cuts are found by bisection over the logits' order-preserving u32 keys,
 *   each probe one pass that also reports the nearest keys on either side of the midpoint, so
 *   the interval snaps to values present in the row and ends on one exactly;
 * - the pick: each invocation sums the kept weights of its contiguous slice, invocation 0 scans
 *   the slice sums for u times the total, and the owner of that slice walks it.
 */
import type { SamplingOptions } from '../sampler';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, NEG_BIG, Params, workgroupReduce } from '../webgpu/wgsl';
import { checkSampling, isGreedy, sampleBlocks, type Picks } from './sample';

const P_SAMPLE = new Params({ rows: 'u32', V: 'u32', C: 'u32', greedy: 'u32', invT: 'f32', topK: 'u32', topP: 'f32' });

const SAMPLE = (WG: number) => `${P_SAMPLE.wgsl}
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> uniforms: array<f32>;
@group(0) @binding(3) var<storage, read_write> picks: array<u32>;

// Monotone map of f32 to u32 (negative floats flipped, positive ones offset), with -0 = +0.
fn orderKey(x: f32) -> u32 {
  if (x == 0.0) { return 0x80000000u; }
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

struct Stats { m: f32, s: f32, best: u32, lo: u32 }
fn mergeStats(a: Stats, b: Stats) -> Stats {
  if (a.s == 0.0) { return b; }
  if (b.s == 0.0) { return a; }
  let m = max(a.m, b.m);
  let best = select(a.best, b.best, b.m > a.m || (b.m == a.m && b.best < a.best));
  return Stats(m, a.s * exp(a.m - m) + b.s * exp(b.m - m), best, min(a.lo, b.lo));
}
${workgroupReduce('reduceStats', 'Stats', WG, 'mergeStats')}

// Over keys >= lo: weight of keys >= mid, the smallest key >= mid, the largest key < mid.
struct Probe { mass: f32, above: u32, below: u32 }
fn mergeProbe(a: Probe, b: Probe) -> Probe { return Probe(a.mass + b.mass, min(a.above, b.above), max(a.below, b.below)); }
${workgroupReduce('reduceProbe', 'Probe', WG, 'mergeProbe')}

fn weight(x: f32, m: f32) -> f32 { return exp((x - m) * P.invT); }

fn probe(o: u32, lid: u32, lo: u32, mid: u32, byMass: bool, m: f32) -> Probe {
  var acc = Probe(0.0, 0xffffffffu, 0u);
  for (var i = lid; i < P.V; i += ${WG}u) {
    let x = logits[o + i];
    let k = orderKey(x);
    if (k < lo) { continue; }
    if (k >= mid) {
      acc.mass += select(1.0, weight(x, m), byMass);
      acc.above = min(acc.above, k);
    } else {
      acc.below = max(acc.below, k);
    }
  }
  return reduceProbe(lid, acc);
}

// The largest key present in the row whose "at least" weight reaches goal; lo0 must qualify.
fn bisect(o: u32, lid: u32, lo0: u32, hi0: u32, goal: f32, byMass: bool, m: f32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    let r = probe(o, lid, lo, mid, byMass, m);
    if (r.mass >= goal) { lo = r.above; } else { hi = r.below; }
  }
  return lo;
}

struct Choice { block: u32, rest: f32 }
var<workgroup> blockMass: array<f32, ${WG}>;
var<workgroup> choice: Choice;

${FLAT_WORKGROUP}
${entry(WG)}
  if (wg >= P.rows) { return; }
  let o = wg * P.V;
  var st = Stats(${NEG_BIG}, 0.0, 0u, 0xffffffffu);
  for (var i = lid; i < P.V; i += ${WG}u) {
    let x = logits[o + i];
    // A strided scan meets indices in increasing order, so '>' keeps this invocation's first max.
    if (x > st.m || st.s == 0.0) {
      st = Stats(x, st.s * exp(st.m - x) + 1.0, i, min(st.lo, orderKey(x)));
    } else {
      st = Stats(st.m, st.s + exp(x - st.m), st.best, min(st.lo, orderKey(x)));
    }
  }
  let row = reduceStats(lid, st);
  let logpOf = -row.m - log(row.s);
  if (P.greedy != 0u) {
    if (lid == 0u) {
      picks[2u * wg] = row.best;
      picks[2u * wg + 1u] = bitcast<u32>(logits[o + row.best] + logpOf);
    }
    return;
  }
  let top = orderKey(row.m);
  var cut = row.lo;
  if (P.topK > 0u) { cut = bisect(o, lid, row.lo, top, f32(P.topK), false, row.m); }
  if (P.topP < 1.0) {
    let total = probe(o, lid, cut, cut, true, row.m).mass;
    cut = bisect(o, lid, cut, top, P.topP * total, true, row.m);
  }

  let start = lid * P.C;
  let end = min(start + P.C, P.V);
  var mass = 0.0;
  for (var i = start; i < end; i++) {
    let x = logits[o + i];
    if (orderKey(x) >= cut) { mass += weight(x, row.m); }
  }
  blockMass[lid] = mass;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var b = 0u; b < ${WG}u; b++) { total += blockMass[b]; }
    let goal = uniforms[wg] * total;
    // Rounding may leave the target at the top of the mass: then the last kept index wins.
    var c = Choice(0u, 3.0e38);
    var before = 0.0;
    for (var b = 0u; b < ${WG}u; b++) {
      if (blockMass[b] == 0.0) { continue; }
      if (before + blockMass[b] > goal) {
        c = Choice(b, goal - before);
        break;
      }
      before += blockMass[b];
      c.block = b;
    }
    choice = c;
  }
  let ch = workgroupUniformLoad(&choice);
  if (lid != ch.block) { return; }
  var acc = 0.0;
  var pick = start;
  for (var i = start; i < end; i++) {
    let x = logits[o + i];
    if (orderKey(x) < cut) { continue; }
    let w = weight(x, row.m);
    if (w <= 0.0) { continue; }
    acc += w;
    pick = i;
    if (acc > ch.rest) { break; }
  }
  picks[2u * wg] = pick;
  picks[2u * wg + 1u] = bitcast<u32>(logits[o + pick] + logpOf);
}`;

/** One pick per row of logits; `uniforms[r]` in [0, 1] drives row r (ignored when greedy). */
export async function sampleWgsl(rt: Runtime, logits: GpuTensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks> {
  const V = checkSampling(logits.size, o, uniforms);
  const R = uniforms.length;
  const greedy = isGreedy(o);
  const WG = sampleBlocks(V);
  const out = rt.allocOut([2 * R], 'sample');
  rt.dispatch({
    key: `sample:${WG}`,
    wgsl: () => SAMPLE(WG),
    params: P_SAMPLE,
    values: {
      rows: R,
      V,
      C: Math.ceil(V / WG),
      greedy: greedy ? 1 : 0,
      invT: greedy ? 0 : 1 / o.temperature,
      topK: o.topK > 0 && o.topK < V ? o.topK : 0,
      topP: Math.min(o.topP, 1),
    },
    buffers: [logits.buffer('sample'), rt.uploadInts(new Int32Array(uniforms.buffer, uniforms.byteOffset, R)), out.buffer('sample')],
    workgroups: R,
  });
  try {
    const raw = await rt.readInts(out.buffer('sample'), 2 * R);
    const logp = new Float32Array(raw.buffer, raw.byteOffset, 2 * R);
    return { ids: Int32Array.from({ length: R }, (_, r) => raw[2 * r]), logp: Float32Array.from({ length: R }, (_, r) => logp[2 * r + 1]) };
  } finally {
    rt.free(out);
  }
}
