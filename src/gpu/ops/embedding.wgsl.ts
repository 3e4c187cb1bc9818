/**
 * Row gather and scatter on the GPU (embedding lookup, gatherRows and its backward scatterRows;
 * the references are CpuBackend's). The table may be in any weight format and may be split by rows across buffers:
 * one dispatch per chunk, each handling the rows whose index falls in its range, so every row is
 * touched exactly once.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, header, Params, weightBinding, weightRead, type WeightRead } from '../webgpu/wgsl';

const WG = 256;
const P_GATHER = new Params({ total: 'u32', D: 'u32', rowStart: 'u32', rows: 'u32', stride: 'u32' });

const GATHER = (read: WeightRead) => `${header(read === 'f16')}${P_GATHER.wgsl}
${weightBinding(1, 'table', read, false)}
@group(0) @binding(2) var<storage, read> ids: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.total) { return; }
  let n = idx / P.D;
  let d = idx % P.D;
  let r = u32(ids[n]) - P.rowStart;
  if (r < P.rows) { out[idx] = loadTable(r * P.stride + d); }
}`;

export function gatherRowsWgsl(rt: Runtime, table: GpuTensor, ids: Int32Array, op: string): GpuTensor {
  const D = table.shape[table.shape.length - 1];
  const R = table.size / D;
  if (table.rowWidth !== D) throw new EngineError(`${op}: the table must be 2-D [rows, D], got [${table.shape}]`);
  for (const r of ids) if (r < 0 || r >= R || !Number.isInteger(r)) throw new EngineError(`${op}: row ${r} out of range [0, ${R})`);
  const read = weightRead(table.dtype, rt.f16);
  const out = rt.allocOut([ids.length, D], op);
  const total = ids.length * D;
  if (total === 0) return out;
  const idBuf = rt.uploadInts(ids);
  for (const c of table.chunks) {
    if (!ids.some((r) => r >= c.rowStart && r < c.rowStart + c.rows)) continue;
    rt.dispatch({
      key: `gather:${read}`,
      wgsl: () => GATHER(read),
      params: P_GATHER,
      values: { total, D, rowStart: c.rowStart, rows: c.rows, stride: table.rowStride },
      buffers: [c.buffer, idBuf, out.buffer(op)],
      workgroups: Math.ceil(total / WG),
    });
  }
  return out;
}

// Rows are distinct (the interface's contract), so no two invocations write one element.
const SCATTER = () => `${P_GATHER.wgsl}
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read> ids: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.total) { return; }
  let n = idx / P.D;
  let r = u32(ids[n]) - P.rowStart;
  if (r < P.rows) { out[r * P.D + idx % P.D] = src[idx]; }
}`;

/** src [N, D] placed at `rows` of a zero [R, D]. */
export function scatterRowsWgsl(rt: Runtime, src: GpuTensor, ids: Int32Array, R: number): GpuTensor {
  const D = src.shape[src.shape.length - 1];
  if (src.size !== ids.length * D) throw new EngineError(`scatterRows: src [${src.shape}] is not ${ids.length} rows`);
  const seen = new Set<number>();
  for (const r of ids) {
    if (r < 0 || r >= R || !Number.isInteger(r)) throw new EngineError(`scatterRows: row ${r} out of range [0, ${R})`);
    if (seen.has(r)) throw new EngineError(`scatterRows: row ${r} appears twice; rows must be distinct`);
    seen.add(r);
  }
  const out = rt.zeros([R, D]);
  const total = ids.length * D;
  if (total === 0) return out;
  const idBuf = rt.uploadInts(ids);
  for (const c of out.chunks) {
    if (!ids.some((r) => r >= c.rowStart && r < c.rowStart + c.rows)) continue;
    rt.dispatch({
      key: 'scatter',
      wgsl: SCATTER,
      params: P_GATHER,
      values: { total, D, rowStart: c.rowStart, rows: c.rows, stride: D },
      buffers: [src.buffer('scatterRows'), idBuf, c.buffer],
      workgroups: Math.ceil(total / WG),
    });
  }
  return out;
}

const P_EMBED_BACK = new Params({ total: 'u32', D: 'u32', rowStart: 'u32', rows: 'u32' });

// One invocation per (distinct id, column): it sums that id's positions in order and adds the
// sum to the table's row, so no two invocations write one element and no atomics are needed.
const EMBED_BACK = () => `${P_EMBED_BACK.wgsl}
@group(0) @binding(1) var<storage, read> dOut: array<f32>;
@group(0) @binding(2) var<storage, read> uniq: array<i32>;
@group(0) @binding(3) var<storage, read> offsets: array<i32>;
@group(0) @binding(4) var<storage, read> order: array<i32>;
@group(0) @binding(5) var<storage, read_write> table: array<f32>;
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.total) { return; }
  let u = idx / P.D;
  let d = idx % P.D;
  let r = u32(uniq[u]) - P.rowStart;
  if (r >= P.rows) { return; }
  var acc = 0.0;
  for (var j = offsets[u]; j < offsets[u + 1u]; j++) { acc += dOut[u32(order[j]) * P.D + d]; }
  table[r * P.D + d] += acc;
}`;

/**
 * dTable [V, D] row ids[n] += dOut [N, D] row n, ids repeating (the reference is
 * embeddingBackwardAdd in ./embedding.ts). The ids are grouped on the host, where they live.
 */
export function embeddingBackwardWgsl(rt: Runtime, dTable: GpuTensor, ids: Int32Array, dOut: GpuTensor): void {
  const op = 'embeddingBackward';
  const D = dTable.shape[dTable.shape.length - 1];
  const V = dTable.size / D;
  if (dTable.rowWidth !== D) throw new EngineError(`${op}: the table must be 2-D [rows, D], got [${dTable.shape}]`);
  if (dOut.size !== ids.length * D) throw new EngineError(`${op}: dOut [${dOut.shape}] is not ${ids.length} rows of ${D}`);
  for (const r of ids) if (r < 0 || r >= V || !Number.isInteger(r)) throw new EngineError(`${op}: row ${r} out of range [0, ${V})`);
  if (ids.length === 0) return;
  const order = Int32Array.from(ids.keys()).sort((a, b) => ids[a] - ids[b] || a - b);
  const uniq: number[] = [];
  const offsets: number[] = [];
  order.forEach((n, j) => {
    if (j === 0 || ids[n] !== ids[order[j - 1]]) {
      uniq.push(ids[n]);
      offsets.push(j);
    }
  });
  offsets.push(order.length);
  const total = uniq.length * D;
  const bufs = [rt.uploadInts(Int32Array.from(uniq)), rt.uploadInts(Int32Array.from(offsets)), rt.uploadInts(order)];
  for (const c of dTable.chunks) {
    if (!uniq.some((r) => r >= c.rowStart && r < c.rowStart + c.rows)) continue;
    rt.dispatch({
      key: op,
      wgsl: EMBED_BACK,
      params: P_EMBED_BACK,
      values: { total, D, rowStart: c.rowStart, rows: c.rows },
      buffers: [dOut.buffer(op), ...bufs, c.buffer],
      workgroups: Math.ceil(total / WG),
    });
  }
}
