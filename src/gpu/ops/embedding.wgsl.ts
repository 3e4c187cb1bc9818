/**
 * Row gather and scatter on the GPU (embedding lookup, gatherRows and its backward scatterRows;
 * the references are CpuBackend's). The table may be f16 and may be split by rows across buffers:
 * one dispatch per chunk, each handling the rows whose index falls in its range, so every row is
 * touched exactly once.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, header, Params, weightBinding } from '../webgpu/wgsl';

const WG = 256;
const P_GATHER = new Params({ total: 'u32', D: 'u32', rowStart: 'u32', rows: 'u32' });

const GATHER = (dtype: 'f32' | 'f16') => `${header(dtype === 'f16')}${P_GATHER.wgsl}
${weightBinding(1, 'table', dtype, false)}
@group(0) @binding(2) var<storage, read> ids: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.total) { return; }
  let n = idx / P.D;
  let d = idx % P.D;
  let r = u32(ids[n]) - P.rowStart;
  if (r < P.rows) { out[idx] = loadTable(r * P.D + d); }
}`;

export function gatherRowsWgsl(rt: Runtime, table: GpuTensor, ids: Int32Array, op: string): GpuTensor {
  const D = table.shape[table.shape.length - 1];
  const R = table.size / D;
  if (table.rowWidth !== D) throw new EngineError(`${op}: the table must be 2-D [rows, D], got [${table.shape}]`);
  for (const r of ids) if (r < 0 || r >= R || !Number.isInteger(r)) throw new EngineError(`${op}: row ${r} out of range [0, ${R})`);
  if (table.dtype === 'f16' && !rt.f16) throw new EngineError(`${op}: f16 table on a device without shader-f16`);
  const out = rt.allocOut([ids.length, D], op);
  const total = ids.length * D;
  if (total === 0) return out;
  const idBuf = rt.uploadInts(ids);
  for (const c of table.chunks) {
    if (!ids.some((r) => r >= c.rowStart && r < c.rowStart + c.rows)) continue;
    rt.dispatch({
      key: `gather:${table.dtype}`,
      wgsl: () => GATHER(table.dtype),
      params: P_GATHER,
      values: { total, D, rowStart: c.rowStart, rows: c.rows },
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
      values: { total, D, rowStart: c.rowStart, rows: c.rows },
      buffers: [src.buffer('scatterRows'), idBuf, c.buffer],
      workgroups: Math.ceil(total / WG),
    });
  }
  return out;
}
