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
 *
 * Where workgroup memory is slow (RowLanes), one invocation takes a whole row and the same
 * slices one after another, so the arithmetic, and the pick, are the same.
 */
import type { SamplingOptions } from '../sampler';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { FLAT_WORKGROUP, NEG_BIG, Params, RowLanes } from '../webgpu/wgsl';
import { checkSampling, isGreedy, sampleBlocks, type Picks } from './sample';

const P_SAMPLE = new Params({ rows: 'u32', V: 'u32', C: 'u32', greedy: 'u32', invT: 'f32', topK: 'u32', topP: 'f32' });

/** WG slices of P.C logits per row; `l` has WG lanes (one per slice) or one. */
const SAMPLE = (WG: number, l: RowLanes) => {
  // The slices' kept weights, in slice order: from workgroup memory, or recomputed in turn.
  const massOf = l.lanes > 1 ? 'blockMass[b]' : 'sliceMass(o, b, cut, stats.m)';
  const choose = `var total = 0.0;
    for (var b = 0u; b < ${WG}u; b++) { total += ${massOf}; }
    let goal = uniforms[row] * total;
    // Rounding may leave the target at the top of the mass: then the last kept index wins.
    var c = Choice(0u, 3.0e38);
    var before = 0.0;
    for (var b = 0u; b < ${WG}u; b++) {
      let bm = ${massOf};
      if (bm == 0.0) { continue; }
      if (before + bm > goal) {
        c = Choice(b, goal - before);
        break;
      }
      before += bm;
      c.block = b;
    }`;
  // A row-wide fold: lanes stride the row and merge through the tree; one lane folds the slices in
  // turn (each a short run, so a long row's sum does not drift the way one running total would).
  const overSlices = (init: string, range: string, args: string, merge: string, reduce: string) => {
    const extra = args ? `, ${args}` : '';
    return l.lanes > 1
      ? `  return ${reduce}(lid, ${range}(o, lane, P.V, ${l.lanes}u${extra}));`
      : `  var acc = ${init};
  for (var b = 0u; b < ${WG}u; b++) { acc = ${merge}(acc, ${range}(o, b * P.C, min((b + 1u) * P.C, P.V), 1u${extra})); }
  return acc;`;
  };
  return `${P_SAMPLE.wgsl}
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
${l.reduce('reduceStats', 'Stats', 'mergeStats')}

// Over keys >= lo: weight of keys >= mid, the smallest key >= mid, the largest key < mid.
struct Probe { mass: f32, above: u32, below: u32 }
fn mergeProbe(a: Probe, b: Probe) -> Probe { return Probe(a.mass + b.mass, min(a.above, b.above), max(a.below, b.below)); }
${l.reduce('reduceProbe', 'Probe', 'mergeProbe')}

fn weight(x: f32, m: f32) -> f32 { return exp((x - m) * P.invT); }

fn probeRange(o: u32, first: u32, end: u32, stride: u32, lo: u32, mid: u32, byMass: bool, m: f32) -> Probe {
  var acc = Probe(0.0, 0xffffffffu, 0u);
  for (var i = first; i < end; i += stride) {
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
  return acc;
}

fn probe(o: u32, lid: u32, lane: u32, lo: u32, mid: u32, byMass: bool, m: f32) -> Probe {
${overSlices('Probe(0.0, 0xffffffffu, 0u)', 'probeRange', 'lo, mid, byMass, m', 'mergeProbe', 'reduceProbe')}
}

// A strided scan meets indices in increasing order, so '>' keeps the first max.
fn statsRange(o: u32, first: u32, end: u32, stride: u32) -> Stats {
  var st = Stats(${NEG_BIG}, 0.0, 0u, 0xffffffffu);
  for (var i = first; i < end; i += stride) {
    let x = logits[o + i];
    if (x > st.m || st.s == 0.0) {
      st = Stats(x, st.s * exp(st.m - x) + 1.0, i, min(st.lo, orderKey(x)));
    } else {
      st = Stats(st.m, st.s + exp(x - st.m), st.best, min(st.lo, orderKey(x)));
    }
  }
  return st;
}

fn rowStats(o: u32, lid: u32, lane: u32) -> Stats {
${overSlices(`Stats(${NEG_BIG}, 0.0, 0u, 0xffffffffu)`, 'statsRange', '', 'mergeStats', 'reduceStats')}
}

// The largest key present in the row whose "at least" weight reaches goal; lo0 must qualify.
fn bisect(o: u32, lid: u32, lane: u32, lo0: u32, hi0: u32, goal: f32, byMass: bool, m: f32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  while (lo < hi) {
    let mid = lo + (hi - lo + 1u) / 2u;
    let r = probe(o, lid, lane, lo, mid, byMass, m);
    if (r.mass >= goal) { lo = r.above; } else { hi = r.below; }
  }
  return lo;
}

struct Choice { block: u32, rest: f32 }
${l.lanes > 1 ? `var<workgroup> blockMass: array<f32, ${WG}>;\nvar<workgroup> choice: Choice;` : ''}

// Kept weight of slice b.
fn sliceMass(o: u32, b: u32, cut: u32, m: f32) -> f32 {
  var mass = 0.0;
  for (var i = b * P.C; i < min((b + 1u) * P.C, P.V); i++) {
    let x = logits[o + i];
    if (orderKey(x) >= cut) { mass += weight(x, m); }
  }
  return mass;
}

// The index in slice c.block where the running kept weight first exceeds c.rest (else its last kept one).
fn walk(o: u32, c: Choice, cut: u32, m: f32) -> u32 {
  var acc = 0.0;
  var pick = c.block * P.C;
  for (var i = pick; i < min(pick + P.C, P.V); i++) {
    let x = logits[o + i];
    if (orderKey(x) < cut) { continue; }
    let w = weight(x, m);
    if (w <= 0.0) { continue; }
    acc += w;
    pick = i;
    if (acc > c.rest) { break; }
  }
  return pick;
}

${FLAT_WORKGROUP}
${l.prelude('P.rows')}
  let o = row * P.V;
  let stats = rowStats(o, lid, lane);
  let logpOf = -stats.m - log(stats.s);
  if (P.greedy != 0u) {
    if (lane == 0u) {
      picks[2u * row] = stats.best;
      picks[2u * row + 1u] = bitcast<u32>(logits[o + stats.best] + logpOf);
    }
    return;
  }
  let top = orderKey(stats.m);
  var cut = stats.lo;
  if (P.topK > 0u) { cut = bisect(o, lid, lane, stats.lo, top, f32(P.topK), false, stats.m); }
  if (P.topP < 1.0) {
    let total = probe(o, lid, lane, cut, cut, true, stats.m).mass;
    cut = bisect(o, lid, lane, cut, top, P.topP * total, true, stats.m);
  }
${
  l.lanes > 1
    ? `  blockMass[lane] = sliceMass(o, lane, cut, stats.m);
  workgroupBarrier();
  if (lane == 0u) {
    ${choose}
    choice = c;
  }
  let ch = workgroupUniformLoad(&choice);
  if (lane != ch.block) { return; }`
    : `  ${choose}
  let ch = c;`
}
  let pick = walk(o, ch, cut, stats.m);
  picks[2u * row] = pick;
  picks[2u * row + 1u] = bitcast<u32>(logits[o + pick] + logpOf);
}`;
};

/** One pick per row of logits; `uniforms[r]` in [0, 1] drives row r (ignored when greedy). */
export async function sampleWgsl(rt: Runtime, logits: GpuTensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks> {
  const V = checkSampling(logits.size, o, uniforms);
  const R = uniforms.length;
  const greedy = isGreedy(o);
  const WG = sampleBlocks(V);
  const lanes = RowLanes.choose(rt.options.workgroupMemory, V, WG);
  const out = rt.allocOut([2 * R], 'sample');
  rt.dispatch({
    key: `sample:${WG}:${lanes.key}`,
    wgsl: () => SAMPLE(WG, lanes),
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
    workgroups: lanes.workgroups(R),
  });
  try {
    const raw = await rt.readInts(out.buffer('sample'), 2 * R);
    const logp = new Float32Array(raw.buffer, raw.byteOffset, 2 * R);
    return { ids: Int32Array.from({ length: R }, (_, r) => raw[2 * r]), logp: Float32Array.from({ length: R }, (_, r) => logp[2 * r + 1]) };
  } finally {
    rt.free(out);
  }
}
