// Vector helpers the element-wise and row kernels share: exp on four lanes, and loads and stores
// of a quad that may be cut by the end of an array.
//
// A value's bits must not depend on which lane it sits in, nor on whether its quad is whole: a
// cut quad goes through the same vector code as a whole one (padded with zeros, its extra lanes
// dropped), and scalar code that needs exp (exp1, a row's tail) runs the vector code on a splat.

/**
 * e^x in each lane, Cephes' expf: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, so r
 * is exact), e^r by its degree-7 polynomial, times 2^n built in the exponent bits. About 1 ulp.
 * Below ln of the smallest normal float the result is 0, as a GPU that flushes denormals gives
 * (a softmax weight that small is no weight); above 88.376 (2^n would leave the exponent's range)
 * it is +Infinity, where the true value is within 30% of f32's largest; NaN stays NaN.
 */
export function expv(x: v128): v128 {
  const lo = f32x4.splat(-87.33654);
  const hi = f32x4.splat(88.37626);
  // pmin / pmax are one instruction each where min / max handle NaN and -0 in several; the clamp
  // keeps a NaN either way (pmax(x, lo) is x unless x < lo).
  const c = f32x4.pmin(f32x4.pmax(x, lo), hi);
  const n = f32x4.nearest(f32x4.mul(c, f32x4.splat(1.44269504089)));
  let r = f32x4.sub(c, f32x4.mul(n, f32x4.splat(0.693359375)));
  r = f32x4.sub(r, f32x4.mul(n, f32x4.splat(-2.12194440e-4)));
  let p = f32x4.splat(1.9875691500e-4);
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.3981999507e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(8.3334519073e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(4.1665795894e-2));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.6666665459e-1));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(5.0000001201e-1));
  const y = f32x4.add(f32x4.add(f32x4.mul(p, f32x4.mul(r, r)), r), f32x4.splat(1));
  // 2^n from n's bits: n is a whole number in [-126, 128], so n + 1.5 * 2^23 is exact and its
  // low mantissa bits are n; a saturating float-to-int conversion costs several instructions.
  const magic = f32x4.splat(12582912);
  const scale = i32x4.shl(i32x4.sub(f32x4.add(n, magic), i32x4.splat(0x4b400000 - 127)), 23);
  const e = f32x4.mul(y, scale);
  const under = f32x4.lt(x, lo);
  const over = f32x4.gt(x, hi);
  return v128.bitselect(f32x4.splat(Infinity), v128.andnot(e, under), over);
}

/** e^x of one value, by expv: the same bits as that value gets in any lane of a vector. */
@inline export function exp1(x: f32): f32 {
  return f32x4.extract_lane(expv(f32x4.splat(x)), 0);
}

/** Four floats at p (element i of an array of n); past n, zeros. */
@inline export function ld(p: usize, i: i32, n: i32): v128 {
  const at = p + (<usize>i << 2);
  if (i + 4 <= n) return v128.load(at);
  let v = f32x4.splat(0);
  v = f32x4.replace_lane(v, 0, load<f32>(at));
  if (i + 1 < n) v = f32x4.replace_lane(v, 1, load<f32>(at, 4));
  if (i + 2 < n) v = f32x4.replace_lane(v, 2, load<f32>(at, 8));
  return v;
}

/** Stores the lanes of v that fall before n, at element i of the array at p. */
@inline export function st(p: usize, i: i32, n: i32, v: v128): void {
  const at = p + (<usize>i << 2);
  if (i + 4 <= n) {
    v128.store(at, v);
    return;
  }
  store<f32>(at, f32x4.extract_lane(v, 0));
  if (i + 1 < n) store<f32>(at, f32x4.extract_lane(v, 1), 4);
  if (i + 2 < n) store<f32>(at, f32x4.extract_lane(v, 2), 8);
}

/** Largest lane; NaN if any lane is NaN, as Math.max gives. */
@inline export function lanesMax(v: v128): f32 {
  return Mathf.max(Mathf.max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), Mathf.max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}
