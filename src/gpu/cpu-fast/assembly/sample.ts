// The next token of each row of logits (ops/sample.ts defines the pick), as sample.wgsl.ts
// computes it with one lane per row: no sort, and no memory but a thread's slice masses. The
// top-k and top-p cuts are found by bisection over the logits' order-preserving u32 keys, each
// probe one pass that also reports the nearest keys present on either side of its midpoint, so
// the interval ends on a value of the row; the pick walks the contiguous slices' kept weights.
import { rowExpSum, rowMax } from './rows';
import { exp1 } from './vec';

@inline function logit(o: usize, i: i32): f32 {
  return load<f32>(o + (<usize>i << 2));
}

/** A monotone map of f32 to u32 (negative floats flipped, positive ones offset), -0 = +0. */
@inline function orderKey(x: f32): u32 {
  if (x == 0) return 0x80000000;
  const b = reinterpret<u32>(x);
  return b & 0x80000000 ? ~b : b | 0x80000000;
}

@inline function weight(x: f32, m: f32, invT: f32): f32 {
  return exp1((x - m) * invT);
}

/** The kept weight (key >= cut) of logits [from, to). */
function keptMass(o: usize, from: i32, to: i32, cut: u32, m: f32, invT: f32): f32 {
  let mass: f32 = 0;
  for (let i = from; i < to; i++) {
    const x = logit(o, i);
    if (orderKey(x) >= cut) mass += weight(x, m, invT);
  }
  return mass;
}

/**
 * The largest key present in the row whose "at least" weight (a count, or a mass when `byMass`)
 * reaches goal; lo0 must qualify. Each probe looks at keys >= lo only.
 */
function bisect(o: usize, V: i32, lo0: u32, hi0: u32, goal: f32, byMass: bool, m: f32, invT: f32): u32 {
  let lo = lo0;
  let hi = hi0;
  while (lo < hi) {
    const mid = lo + (hi - lo + 1) / 2;
    let mass: f32 = 0;
    let above: u32 = 0xffffffff;
    let below: u32 = 0;
    for (let i = 0; i < V; i++) {
      const x = logit(o, i);
      const k = orderKey(x);
      if (k < lo) continue;
      if (k >= mid) {
        mass += byMass ? weight(x, m, invT) : 1;
        above = min(above, k);
      } else {
        below = max(below, k);
      }
    }
    if (mass >= goal) lo = above;
    else hi = below;
  }
  return lo;
}

/**
 * Rows [r0, r1) of logits [R, V]: picks[2r] = the id, picks[2r + 1] = the bits of its raw
 * log-prob. The row is cut into WG slices of C logits; `slices` is this thread's scratch of WG
 * floats. uniforms[r] drives row r unless greedy; topK 0 and topP 1 cut nothing.
 */
export function sample(logits: usize, uniforms: usize, V: i32, C: i32, WG: i32, greedy: i32, invT: f32, topK: i32, topP: f32, picks: usize, slices: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = logits + <usize>r * (<usize>V << 2);
    const m = rowMax(o, V);
    const logS = Mathf.log(rowExpSum(o, V, m, 0));
    let pick = 0;
    if (greedy) {
      // Quads first, to the one holding the first value equal to the max; then one by one.
      const mv = f32x4.splat(m);
      while (pick + 4 <= V && !v128.any_true(f32x4.eq(v128.load(o + (<usize>pick << 2)), mv))) pick += 4;
      while (pick < V - 1 && !(logit(o, pick) == m)) pick++;
    } else {
      let lo: u32 = 0xffffffff;
      for (let i = 0; i < V; i++) lo = min(lo, orderKey(logit(o, i)));
      const top = orderKey(m);
      let cut = lo;
      if (topK > 0) cut = bisect(o, V, lo, top, <f32>topK, false, m, invT);
      let total: f32 = 0;
      for (let b = 0; b < WG; b++) {
        const mass = keptMass(o, min(V, b * C), min(V, (b + 1) * C), cut, m, invT);
        store<f32>(slices + (<usize>b << 2), mass);
        total += mass;
      }
      if (topP < 1) {
        cut = bisect(o, V, cut, top, topP * total, true, m, invT);
        total = 0;
        for (let b = 0; b < WG; b++) {
          const mass = keptMass(o, min(V, b * C), min(V, (b + 1) * C), cut, m, invT);
          store<f32>(slices + (<usize>b << 2), mass);
          total += mass;
        }
      }
      // The slice where the running mass passes u times the total; rounding may leave the goal
      // at the very top, and then the last slice with mass, and its last kept index, win.
      const goal = load<f32>(uniforms + (<usize>r << 2)) * total;
      let block = 0;
      let rest: f32 = 3.0e38;
      let before: f32 = 0;
      for (let b = 0; b < WG; b++) {
        const bm = load<f32>(slices + (<usize>b << 2));
        if (bm == 0) continue;
        if (before + bm > goal) {
          block = b;
          rest = goal - before;
          break;
        }
        before += bm;
        block = b;
      }
      let acc: f32 = 0;
      pick = block * C;
      for (let i = block * C; i < min((block + 1) * C, V); i++) {
        const x = logit(o, i);
        if (orderKey(x) < cut) continue;
        const w = weight(x, m, invT);
        if (w <= 0) continue;
        acc += w;
        pick = i;
        if (acc > rest) break;
      }
    }
    store<i32>(picks + (<usize>r << 3), pick);
    // x - m first: exact for the likely picks, near the max, where a sum with -m - log S first was not.
    store<f32>(picks + (<usize>r << 3) + 4, logit(o, pick) - m - logS);
  }
}
