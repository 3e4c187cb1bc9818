/**
 * SHA-256 (FIPS 180-4), incremental. WebCrypto's digest takes one buffer whole, so a run file
 * read as a stream (hundreds of megabytes, line by line) could not be hashed with it without
 * holding the file; this hasher takes any number of pieces in constant memory. Whole buffers
 * (model files, already in memory) go to WebCrypto where the page has it, for its speed.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Characters encoded per step by updateText: bounds the scratch buffer, not the input. */
const TEXT_CHUNK = 16_384;

export class Sha256 {
  private readonly h = Uint32Array.from(INITIAL);
  private readonly w = new Uint32Array(64);
  private readonly block = new Uint8Array(64);
  private filled = 0;
  private bytes = 0;
  private done = false;
  private scratch: Uint8Array | null = null;
  private encoder: TextEncoder | null = null;

  update(data: Uint8Array): this {
    if (this.done) throw new Error('Sha256: update after digest; start a new hasher');
    this.bytes += data.byteLength;
    let i = 0;
    if (this.filled > 0) {
      const take = Math.min(64 - this.filled, data.byteLength);
      this.block.set(data.subarray(0, take), this.filled);
      this.filled += take;
      i = take;
      if (this.filled < 64) return this;
      this.compress(this.block, 0);
      this.filled = 0;
    }
    for (; i + 64 <= data.byteLength; i += 64) this.compress(data, i);
    if (i < data.byteLength) {
      this.block.set(data.subarray(i), 0);
      this.filled = data.byteLength - i;
    }
    return this;
  }

  /** Hashes the UTF-8 encoding of `text` without encoding it whole (a line may be huge). */
  updateText(text: string): this {
    this.encoder ??= new TextEncoder();
    this.scratch ??= new Uint8Array(TEXT_CHUNK * 3);
    for (let start = 0; start < text.length;) {
      let end = Math.min(start + TEXT_CHUNK, text.length);
      // A surrogate pair split across two pieces would encode as two U+FFFD.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      const { written } = this.encoder.encodeInto(text.slice(start, end), this.scratch);
      this.update(this.scratch.subarray(0, written));
      start = end;
    }
    return this;
  }

  digest(): Uint8Array {
    if (this.done) throw new Error('Sha256: digest called twice; start a new hasher');
    const bits = this.bytes * 8;
    const tail = new Uint8Array((this.filled < 56 ? 64 : 128) - this.filled);
    tail[0] = 0x80;
    const view = new DataView(tail.buffer);
    // The length in bits as a 64-bit big-endian integer; 2^53 bytes is past any input here.
    view.setUint32(tail.length - 8, Math.floor(bits / 0x1_0000_0000));
    view.setUint32(tail.length - 4, bits >>> 0);
    this.update(tail);
    this.done = true;
    const out = new Uint8Array(32);
    const o = new DataView(out.buffer);
    for (let j = 0; j < 8; j++) o.setUint32(j * 4, this.h[j]);
    return out;
  }

  hex(): string {
    return toHex(this.digest());
  }

  private compress(data: Uint8Array, at: number): void {
    const w = this.w;
    for (let t = 0; t < 16; t++) {
      const p = at + t * 4;
      w[t] = (data[p] << 24) | (data[p + 1] << 16) | (data[p + 2] << 8) | data[p + 3];
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15];
      const b = w[t - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    const h = this.h;
    let a = h[0],
      b = h[1],
      c = h[2],
      d = h[3],
      e = h[4],
      f = h[5],
      g = h[6],
      k = h[7];
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + S1 + ch + K[t] + w[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }
}

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/**
 * Above this, WebCrypto's copy of its input (the spec has digest copy the bytes) would double
 * the memory of a model file already held once; the hasher reads it in place, ~5x slower.
 */
const WEBCRYPTO_MAX_BYTES = 256 * 1024 * 1024;

/**
 * SHA-256 of one buffer as lower-case hex: what `sha256sum` prints, and the hub lists for
 * LFS files. WebCrypto where it exists (it is missing outside secure contexts, e.g. the lab
 * served over plain http to another machine) and the copy is affordable, else the hasher.
 */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const subtle = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (subtle && data.byteLength <= WEBCRYPTO_MAX_BYTES) return toHex(new Uint8Array(await subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>)));
  return new Sha256().update(data).hex();
}
