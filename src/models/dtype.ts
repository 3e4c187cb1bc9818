/** Conversions between the dtypes checkpoints store and the f32 the engine computes in. */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half -> float, exact for every half including subnormals, inf and NaN. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** float -> IEEE half with round-to-nearest-even (what torch's .half() does). */
export function floatToHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let m = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    if (rem > half || (rem === half && m & 1)) m++;
    return sign | m;
  }
  let m = mant >>> 13;
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && m & 1)) {
    m++;
    if (m === 0x400) {
      m = 0;
      e++;
      if (e >= 31) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | m;
}

export function bf16ToFloat(b: number): number {
  u32[0] = b << 16;
  return f32[0];
}

/** float -> bfloat16 with round-to-nearest-even. */
export function floatToBf16(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  if ((bits & 0x7fffffff) > 0x7f800000) return (bits >>> 16) | 0x40;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export function halfArrayToFloat(src: Uint16Array): Float32Array {
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = halfToFloat(src[i]);
  return out;
}

export function bf16ArrayToFloat(src: Uint16Array): Float32Array {
  const out = new Float32Array(src.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < src.length; i++) outBits[i] = src[i] << 16;
  return out;
}

export function floatArrayToHalf(src: Float32Array): Uint16Array {
  const out = new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = floatToHalf(src[i]);
  return out;
}
