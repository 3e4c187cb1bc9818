/**
 * Base64 for adapter bytes in run files. Written out because Node 20 has no
 * Uint8Array.toBase64 and btoa needs a binary string (a second copy of a large adapter).
 * Decoding is strict: a hostile file gets an error, never silently different bytes.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

export function encodeBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  // Chunks keep each String.fromCharCode call well under the engine's argument limit.
  const CHUNK = 3 * 16384;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const end = Math.min(start + CHUNK, bytes.length);
    const codes: number[] = [];
    for (let i = start; i < end; i += 3) {
      const b0 = bytes[i];
      const b1 = i + 1 < end ? bytes[i + 1] : 0;
      const b2 = i + 2 < end ? bytes[i + 2] : 0;
      codes.push(ALPHABET.charCodeAt(b0 >> 2), ALPHABET.charCodeAt(((b0 & 3) << 4) | (b1 >> 4)));
      codes.push(i + 1 < end ? ALPHABET.charCodeAt(((b1 & 15) << 2) | (b2 >> 6)) : 61);
      codes.push(i + 2 < end ? ALPHABET.charCodeAt(b2 & 63) : 61);
    }
    parts.push(String.fromCharCode(...codes));
  }
  return parts.join('');
}

/** @throws Error naming the first bad character; callers wrap it in their own error. */
export function decodeBase64(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new Error(`base64 length ${text.length} is not a multiple of 4`);
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let quad = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      const isPad = c === 61 && i + 4 === text.length && j >= 4 - padding;
      const v = isPad ? 0 : c < 128 ? LOOKUP[c] : -1;
      if (v < 0) throw new Error(`base64 has an invalid character at offset ${i + j}`);
      quad = (quad << 6) | v;
    }
    out[o++] = (quad >> 16) & 255;
    if (o < out.length) out[o++] = (quad >> 8) & 255;
    if (o < out.length) out[o++] = quad & 255;
  }
  return out;
}
