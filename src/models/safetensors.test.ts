import { describe, expect, it, vi } from 'vitest';
import { floatToBf16, floatToHalf, halfToFloat, bf16ToFloat } from './dtype';
import { WeightsError } from './errors';
import { countNonFinite, finiteTensor, MAX_TENSORS, parseSafetensors, tensorToFloat32, writeSafetensors } from './safetensors';

const header = (obj: unknown, data = new Uint8Array(0)) => {
  const json = new TextEncoder().encode(JSON.stringify(obj));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
};

describe('safetensors', () => {
  it('round-trips F32 and F16 tensors, with metadata, 8-byte aligned data', () => {
    const a = Float32Array.from([1, -2.5, 3.25, 0]);
    const bytes = writeSafetensors(
      [
        { name: 'a', shape: [2, 2], data: a },
        { name: 'h', shape: [4], data: a, dtype: 'F16' },
      ],
      { format: 'pt' },
    );
    const headerLen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + headerLen) % 8).toBe(0);
    const f = parseSafetensors(bytes);
    expect(f.metadata).toEqual({ format: 'pt' });
    expect(Array.from(tensorToFloat32(f.tensors.get('a')!))).toEqual([1, -2.5, 3.25, 0]);
    expect(Array.from(tensorToFloat32(f.tensors.get('h')!))).toEqual([1, -2.5, 3.25, 0]);
  });

  it('reads tensors from a Node Buffer view into a larger pool (slice() does not copy there)', () => {
    const bytes = writeSafetensors([{ name: 'x', shape: [3], data: Float32Array.from([7, 8, 9]) }]);
    const pool = Buffer.alloc(bytes.length + 13);
    pool.set(bytes, 13);
    const view = pool.subarray(13);
    expect(Array.from(tensorToFloat32(parseSafetensors(view).tensors.get('x')!))).toEqual([7, 8, 9]);
  });

  it.each([
    ['a file shorter than its length prefix', new Uint8Array(4), /only 4 bytes/],
    [
      'a header longer than the file',
      (() => {
        const b = new Uint8Array(16);
        new DataView(b.buffer).setBigUint64(0, 1000n, true);
        return b;
      })(),
      /header claims 1000/,
    ],
    [
      'a header that is not JSON',
      (() => {
        const b = header({});
        b[8] = 0x7b;
        b[9] = 0x7b;
        return b;
      })(),
      /not valid JSON/,
    ],
    ['an unsupported dtype', header({ x: { dtype: 'I8', shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1)), /dtype I8/],
    [
      'offsets that disagree with the shape',
      header({ x: { dtype: 'F32', shape: [2], data_offsets: [0, 4] } }, new Uint8Array(8)),
      /spans 4 bytes but shape \[2\] needs 8/,
    ],
    ['a tensor past the end (truncated download)', header({ x: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }, new Uint8Array(8)), /past the end/],
    ['a negative offset', header({ x: { dtype: 'F32', shape: [1], data_offsets: [-4, 0] } }), /invalid data_offsets/],
    // Two tensors reading the same bytes: writing one would silently change the other.
    [
      'overlapping tensors',
      header({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, new Uint8Array(12)),
      /tensor b overlaps tensor a \(bytes 4 to 8\)/,
    ],
    [
      'one tensor named twice over the same bytes',
      header({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, new Uint8Array(4)),
      /overlaps/,
    ],
    [
      'a gap between tensors',
      header({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] } }, new Uint8Array(12)),
      /bytes 4 to 8 of the data belong to no tensor/,
    ],
    [
      'data before the first tensor',
      header({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, new Uint8Array(8)),
      /bytes 0 to 4 of the data belong to no tensor/,
    ],
    [
      'bytes after the last tensor',
      header({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, new Uint8Array(9)),
      /bytes 4 to 9 of the data belong to no tensor/,
    ],
  ])('rejects %s with a WeightsError that says what to do', (_, bytes, message) => {
    expect(() => parseSafetensors(bytes)).toThrow(WeightsError);
    expect(() => parseSafetensors(bytes)).toThrow(message);
    expect(() => parseSafetensors(bytes)).toThrow(String(message).includes('I8') ? /unquantized checkpoint/ : /download it again/);
  });
});

describe('finiteTensor', () => {
  it('decodes finite weights and names a tensor holding NaN or Inf, with the count', () => {
    const file = parseSafetensors(
      writeSafetensors([
        { name: 'ok', shape: [3], data: Float32Array.from([1, -0, 2 ** 127]) },
        { name: 'bad', shape: [4], data: Float32Array.from([1, NaN, Infinity, -Infinity]) },
        { name: 'half', shape: [2], data: Float32Array.from([1, 1e6]), dtype: 'F16' },
      ]),
    );
    expect(Array.from(finiteTensor(file.tensors.get('ok')!, 'model'))).toEqual([1, -0, 2 ** 127]);
    expect(() => finiteTensor(file.tensors.get('bad')!, 'model')).toThrow(
      new WeightsError(
        'model: tensor bad holds 3 NaN or infinite values of 4; the weights are damaged (or were saved after training diverged). Use another copy or an earlier checkpoint.',
      ),
    );
    // 1e6 overflows f16 to Inf: caught after decoding, whatever the stored dtype.
    expect(() => finiteTensor(file.tensors.get('half')!, 'model')).toThrow(/tensor half holds 1 NaN or infinite value of 2/);
    expect(countNonFinite(Float32Array.from([0, NaN]))).toBe(1);
  });
});

describe('f16 and bf16 conversions', () => {
  it.each([
    [0, 0x0000],
    [1, 0x3c00],
    [-2, 0xc000],
    [65504, 0x7bff],
    [6.103515625e-5, 0x0400],
    [5.960464477539063e-8, 0x0001],
    [Infinity, 0x7c00],
    [1e6, 0x7c00],
  ])('half %f <-> 0x%s', (x, h) => {
    expect(floatToHalf(x)).toBe(h);
    expect(halfToFloat(h)).toBe(x === 1e6 ? Infinity : x);
  });

  it('rounds to nearest even and handles NaN', () => {
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(floatToHalf(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(Number.isNaN(halfToFloat(floatToHalf(NaN)))).toBe(true);
    expect(bf16ToFloat(floatToBf16(3.140625))).toBe(3.140625);
    expect(bf16ToFloat(floatToBf16(1 + 2 ** -8))).toBe(1); // tie -> even
    expect(Number.isNaN(bf16ToFloat(floatToBf16(NaN)))).toBe(true);
  });
});

describe('a safetensors header that asks for more work than any checkpoint', () => {
  /** A header of `n` empty tensors (and metadata), as text: what a 103 MB header of 1.28 M entries is, smaller. */
  const emptyTensors = (n: number) => {
    const entries = Array.from({ length: n }, (_, i) => `"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`);
    return header(JSON.parse(`{"__metadata__":{"format":"pt"},${entries.join(',')}}`));
  };

  it('counts the entries before JSON.parse builds one object for each', () => {
    const bytes = emptyTensors(MAX_TENSORS + 1);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(() => parseSafetensors(bytes, 'model.safetensors')).toThrow(
        'model.safetensors: the header lists more than 65,536 tensors, more than any checkpoint the engine runs; it is not a model file.',
      );
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it('reads a header of exactly the most tensors, metadata besides', () => {
    expect(parseSafetensors(emptyTensors(MAX_TENSORS)).tensors.size).toBe(MAX_TENSORS);
  });

  it('refuses a header nested deeper than any safetensors header before parsing it', () => {
    const deep = header(JSON.parse(`{"x":${'['.repeat(20)}${']'.repeat(20)}}`));
    expect(() => parseSafetensors(deep)).toThrow(/header nests deeper than 16 levels/);
  });
});
