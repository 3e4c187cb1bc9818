/**
 * Rotate-half RoPE on the GPU; the reference is ./rope.ts. Angles come from a cos/sin table
 * computed in f64 on the host: in f32 on the GPU, pos * freq at position 4000 already carries an
 * error of ~2e-4 rad, which the CPU reference (f64) does not have. The table grows on demand.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, Params } from '../webgpu/wgsl';

const WG = 256;
const P_ROPE = new Params({ total: 'u32', width: 'u32', headDim: 'u32', half: 'u32', sign: 'f32' });

// Negative positions (never produced by the model, but legal in the reference) read |pos|'s row:
// cos is even and sin odd.
const ROPE = () => `${P_ROPE.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
${FLAT_WORKGROUP}
${entry(WG)}
  let idx = wg * ${WG}u + lid;
  if (idx >= P.total) { return; }
  let i = idx % P.half;
  let pairsPerRow = P.width / 2u;
  let n = idx / pairsPerRow;
  let head = (idx % pairsPerRow) / P.half;
  let pos = positions[n];
  let cs = table[u32(abs(pos)) * P.half + i];
  let s = P.sign * select(cs.y, -cs.y, pos < 0);
  let o = n * P.width + head * P.headDim + i;
  let a = x[o];
  let b = x[o + P.half];
  y[o] = a * cs.x - b * s;
  y[o + P.half] = b * cs.x + a * s;
}`;

interface RopeTable {
  tensor: GpuTensor;
  positions: number;
}

const tables = new WeakMap<Runtime, Map<string, RopeTable>>();

export function ropeTable(rt: Runtime, headDim: number, theta: number, maxPos: number): GpuTensor {
  let perRt = tables.get(rt);
  if (!perRt) tables.set(rt, (perRt = new Map()));
  const key = `${headDim}:${theta}`;
  const have = perRt.get(key);
  if (have && have.positions > maxPos) return have.tensor;
  const positions = Math.max(maxPos + 1, 2 * (have?.positions ?? 0), 256);
  const half = headDim / 2;
  const data = new Float32Array(positions * half * 2);
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < half; i++) {
      const ang = p * Math.pow(theta, (-2 * i) / headDim);
      data[(p * half + i) * 2] = Math.cos(ang);
      data[(p * half + i) * 2 + 1] = Math.sin(ang);
    }
  }
  // The old table may still be named by unsubmitted commands; free() defers or recycles safely.
  if (have) rt.free(have.tensor);
  const tensor = rt.upload(data, [positions, half, 2]);
  perRt.set(key, { tensor, positions });
  return tensor;
}

export function ropeWgsl(rt: Runtime, x: GpuTensor, positions: Int32Array, headDim: number, theta: number, inverse: boolean): GpuTensor {
  const N = positions.length;
  if (headDim % 2 !== 0) throw new EngineError(`rope: headDim ${headDim} must be even`);
  if (N === 0 || x.size % N !== 0 || (x.size / N) % headDim !== 0) {
    throw new EngineError(`rope: ${x.size} elements are not ${N} rows of whole heads of ${headDim}`);
  }
  const y = rt.allocOut(x.shape, 'rope');
  let maxPos = 0;
  for (const p of positions) maxPos = Math.max(maxPos, Math.abs(p));
  const table = ropeTable(rt, headDim, theta, maxPos);
  const total = x.size / 2;
  rt.dispatch({
    key: 'rope',
    wgsl: ROPE,
    params: P_ROPE,
    values: { total, width: x.size / N, headDim, half: headDim / 2, sign: inverse ? -1 : 1 },
    buffers: [x.buffer('rope'), rt.uploadInts(positions), table.buffer('rope'), y.buffer('rope')],
    workgroups: Math.ceil(total / WG),
  });
  return y;
}
