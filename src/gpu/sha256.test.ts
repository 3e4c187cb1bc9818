import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sha256, sha256Hex } from './sha256';

const nodeHex = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

describe('Sha256', () => {
  it('matches the FIPS 180-4 examples', () => {
    expect(new Sha256().hex()).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(new Sha256().updateText('abc').hex()).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(new Sha256().updateText('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq').hex()).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('gives the same digest however the input is cut, at every length around a block', () => {
    const data = Uint8Array.from({ length: 300 }, (_, i) => (i * 131 + 7) & 0xff);
    for (let n = 0; n <= data.length; n += n < 130 ? 1 : 17) {
      const whole = nodeHex(data.subarray(0, n));
      const pieces = new Sha256();
      for (let i = 0; i < n; i += 7) pieces.update(data.subarray(i, Math.min(n, i + 7)));
      expect(pieces.hex(), `length ${n}`).toBe(whole);
    }
  });

  it('hashes text as UTF-8 in pieces, a surrogate pair at a piece boundary included', () => {
    // 16,383 ASCII characters put the emoji's high surrogate last in the first 16,384.
    const text = 'a'.repeat(16_383) + '\u{1F600}' + 'é'.repeat(20_000) + '\n';
    expect(new Sha256().updateText(text).hex()).toBe(nodeHex(text));
  });

  it('sha256Hex agrees with the incremental hasher', async () => {
    const data = new TextEncoder().encode('model.safetensors');
    expect(await sha256Hex(data)).toBe(nodeHex(data));
  });

  it('refuses use after its digest', () => {
    const h = new Sha256();
    h.digest();
    expect(() => h.update(new Uint8Array(1))).toThrow(/start a new hasher/);
  });
});
