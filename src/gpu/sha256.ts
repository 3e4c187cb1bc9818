/**
 * SHA-256, incremental, over @noble/hashes (audited; about 160 MB/s in Node here). WebCrypto's
 * digest takes one buffer whole, so a run file read as a stream (hundreds of megabytes, line by
 * line) could not be hashed with it without holding the file; this hasher takes any number of
 * pieces in constant memory. Whole buffers (model files,
 * already in memory) go to WebCrypto where the page has it.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** Characters encoded per step by updateText: bounds the scratch buffer, not the input. */
const TEXT_CHUNK = 16_384;

export class Sha256 {
  private readonly hash = sha256.create();
  private done = false;
  private scratch: Uint8Array | null = null;
  private encoder: TextEncoder | null = null;

  update(data: Uint8Array): this {
    if (this.done) throw new Error('Sha256: update after digest; start a new hasher');
    this.hash.update(data);
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
    this.done = true;
    return this.hash.digest();
  }

  hex(): string {
    return bytesToHex(this.digest());
  }
}

/**
 * Above this, WebCrypto's copy of its input (the spec has digest copy the bytes) would double
 * the memory of a model file already held once; the hasher reads it in place.
 */
const WEBCRYPTO_MAX_BYTES = 256 * 1024 * 1024;

/**
 * SHA-256 of one buffer as lower-case hex: what `sha256sum` prints, and the hub lists for
 * LFS files. WebCrypto where it exists (it is missing outside secure contexts, e.g. the lab
 * served over plain http to another machine) and the copy is affordable, else the hasher.
 */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  const subtle = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (subtle && data.byteLength <= WEBCRYPTO_MAX_BYTES) return bytesToHex(new Uint8Array(await subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>)));
  return new Sha256().update(data).hex();
}
