/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header mapping tensor
 * names to {dtype, shape, data_offsets}, then the raw bytes. Checkpoints are untrusted input,
 * so every offset and size is checked before a byte is read.
 */
import { WeightsError } from './errors';
import { bf16ArrayToFloat, floatArrayToHalf, halfArrayToFloat } from './dtype';
import { nestsDeeperThan, topLevelMembers } from '../base/json-scan';

/**
 * A weight's values a block of rows at a time: a backend converts a checkpoint tensor (or random
 * init) into its storage format block by block, so no model is ever held whole in f32.
 */
export interface WeightSource {
  readonly shape: readonly number[];
  /** Rows [start, start + count) of the first dimension, as f32, row-major. */
  rows(start: number, count: number): Float32Array;
}

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';
const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };
const MAX_HEADER_BYTES = 100 * 1024 * 1024;
/**
 * The most tensors one file may hold: a 1,024-layer model's optimizer state has about 29,000.
 * Counted in the header's text before JSON.parse builds an object per entry (1.28 M empty
 * entries in a 103 MB header cost 13 s and 1.7 GB).
 */
export const MAX_TENSORS = 65_536;
/** Deeper than any safetensors header (an entry's shape is at depth three). */
const MAX_HEADER_DEPTH = 16;

export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** The tensor's bytes inside the file (a view, not a copy). */
  bytes: Uint8Array;
}

export interface SafetensorsFile {
  metadata: Record<string, string>;
  tensors: Map<string, TensorEntry>;
}

export function parseSafetensors(file: Uint8Array, fileName = 'model.safetensors'): SafetensorsFile {
  const fail = (why: string) => new WeightsError(`${fileName}: ${why}. The file may be truncated or not a safetensors file; download it again.`);
  if (file.byteLength < 8) throw fail(`only ${file.byteLength} bytes`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (headerLen > MAX_HEADER_BYTES || 8 + headerLen > file.byteLength) {
    throw fail(`header claims ${headerLen} bytes but the file has ${file.byteLength}`);
  }
  const text = new TextDecoder().decode(file.subarray(8, 8 + headerLen));
  if (nestsDeeperThan(text, MAX_HEADER_DEPTH)) throw fail(`header nests deeper than ${MAX_HEADER_DEPTH} levels`);
  // One member may be __metadata__.
  if (topLevelMembers(text, MAX_TENSORS + 1) > MAX_TENSORS + 1) {
    throw new WeightsError(
      `${fileName}: the header lists more than ${MAX_TENSORS.toLocaleString('en-US')} tensors, more than any checkpoint the engine runs; it is not a model file.`,
    );
  }
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(text);
  } catch {
    throw fail('header is not valid JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw fail('header is not an object');
  const dataStart = 8 + headerLen;
  const dataLen = file.byteLength - dataStart;
  const tensors = new Map<string, TensorEntry>();
  const spans: { name: string; begin: number; end: number }[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const dtype = info?.dtype;
    if (dtype !== 'F32' && dtype !== 'F16' && dtype !== 'BF16') {
      throw new WeightsError(`${fileName}: tensor ${name} has dtype ${String(dtype)}; the engine reads F32, F16 and BF16. ` + 'Use an unquantized checkpoint.');
    }
    const shape = info.shape;
    const offsets = info.data_offsets;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw fail(`tensor ${name} has an invalid shape`);
    }
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      throw fail(`tensor ${name} has invalid data_offsets`);
    }
    const [begin, end] = offsets as [number, number];
    const expected = shape.reduce((a: number, b: number) => a * b, 1) * BYTES[dtype];
    if (end < begin || end - begin !== expected) {
      throw fail(`tensor ${name} spans ${end - begin} bytes but shape ${JSON.stringify(shape)} needs ${expected}`);
    }
    if (end > dataLen) throw fail(`tensor ${name} ends at byte ${end} past the end of the data (${dataLen})`);
    tensors.set(name, { name, dtype, shape: shape as number[], bytes: file.subarray(dataStart + begin, dataStart + end) });
    spans.push({ name, begin, end });
  }
  checkSpans(spans, dataLen, fail);
  return { metadata, tensors };
}

/**
 * The tensors must tile the data exactly, as the reference reader requires: overlapping
 * tensors would alias one another's bytes, and bytes that belong to no tensor are a file
 * that is not what its header says.
 */
function checkSpans(spans: { name: string; begin: number; end: number }[], dataLen: number, fail: (why: string) => Error): void {
  spans.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let previous: string | null = null;
  for (const s of spans) {
    if (s.begin < at) throw fail(`tensor ${s.name} overlaps tensor ${previous} (bytes ${s.begin} to ${at})`);
    if (s.begin > at) throw fail(`bytes ${at} to ${s.begin} of the data belong to no tensor`);
    at = s.end;
    previous = s.name;
  }
  if (at !== dataLen) throw fail(`bytes ${at} to ${dataLen} of the data belong to no tensor`);
}

/** How many of `data` are NaN or infinite (x - x is 0 for every finite x, NaN otherwise). */
export function countNonFinite(data: Float32Array): number {
  let n = 0;
  for (let i = 0; i < data.length; i++) if (data[i] - data[i] !== 0) n++;
  return n;
}

/**
 * Decodes a tensor to f32, refusing NaN and infinite values: they would poison every output
 * and every gradient without a word.
 *
 * @throws WeightsError naming the tensor and how many values are not finite
 */
export function finiteTensor(t: TensorEntry, where: string): Float32Array {
  const data = tensorToFloat32(t);
  const bad = countNonFinite(data);
  if (bad > 0) throw nonFiniteError(t, where, bad, data.length);
  return data;
}

function nonFiniteError(t: TensorEntry, where: string, bad: number, of: number): WeightsError {
  return new WeightsError(
    `${where}: tensor ${t.name} holds ${bad} NaN or infinite value${bad === 1 ? '' : 's'} of ${of}; ` +
      'the weights are damaged (or were saved after training diverged). Use another copy or an earlier checkpoint.',
  );
}

/**
 * A tensor as a WeightSource: decoded to f32 a block of rows at a time, each block refused like
 * finiteTensor refuses a tensor (the count is of the whole tensor), so a bf16 checkpoint is
 * converted at load without an f32 copy of any whole tensor.
 */
export function tensorSource(t: TensorEntry, where: string): WeightSource {
  const rows = t.shape.length === 0 ? 1 : t.shape[0];
  const rowBytes = rows === 0 ? 0 : t.bytes.byteLength / rows;
  const slice = (start: number, count: number): TensorEntry => ({ ...t, bytes: t.bytes.subarray(start * rowBytes, (start + count) * rowBytes) });
  return {
    shape: t.shape,
    rows(start, count) {
      const data = tensorToFloat32(slice(start, count));
      if (countNonFinite(data) === 0) return data;
      let bad = 0;
      for (let r = 0; r < rows; r += count) bad += countNonFinite(tensorToFloat32(slice(r, Math.min(count, rows - r))));
      throw nonFiniteError(t, where, bad, t.bytes.byteLength / BYTES[t.dtype]);
    },
  };
}

/** Decode a tensor to f32. Copies, because the file's bytes need not be 4-byte aligned. */
export function tensorToFloat32(t: TensorEntry): Float32Array {
  // new Uint8Array(view) copies even for a Node Buffer, whose slice() would not.
  const aligned = new Uint8Array(t.bytes);
  switch (t.dtype) {
    case 'F32':
      return new Float32Array(aligned.buffer, 0, aligned.byteLength / 4);
    case 'F16':
      return halfArrayToFloat(new Uint16Array(aligned.buffer, 0, aligned.byteLength / 2));
    case 'BF16':
      return bf16ArrayToFloat(new Uint16Array(aligned.buffer, 0, aligned.byteLength / 2));
  }
}

export interface TensorToWrite {
  name: string;
  shape: number[];
  data: Float32Array;
  /** Stored dtype; f32 data is converted. Default F32. */
  dtype?: 'F32' | 'F16';
}

/** Serialize tensors (in the given order) to safetensors bytes. */
export function writeSafetensors(tensors: TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  const payloads: Uint8Array[] = [];
  let offset = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new WeightsError(`${t.name}: shape ${JSON.stringify(t.shape)} does not match ${t.data.length} values`);
    const dtype = t.dtype ?? 'F32';
    const raw = dtype === 'F16' ? floatArrayToHalf(t.data) : t.data;
    const bytes = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.byteLength] };
    payloads.push(bytes);
    offset += bytes.byteLength;
  }
  let json = JSON.stringify(header);
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  json += ' '.repeat((8 - ((8 + new TextEncoder().encode(json).byteLength) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const p of payloads) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
