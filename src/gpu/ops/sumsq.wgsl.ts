/**
 * Sum of squares (gradient norms) on the GPU: per chunk of every tensor, a few workgroups each
 * reduce a strided share to one partial in a common buffer; the partials of all tensors are
 * read back at once and added in f64 on the host. One read per global norm, not one per
 * tensor: a LoRA on every projection of a 28-layer model has 392 gradient tensors.
 */
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, entry, FLAT_WORKGROUP, Params, workgroupReduce } from '../webgpu/wgsl';

const WG = 256;
const MAX_GROUPS = 256;
const P_SUMSQ = new Params({ n: 'u32', groups: 'u32', outOffset: 'u32' });

const SUMSQ = () => `${P_SUMSQ.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> partial: array<f32>;
${ADD_F32}
${workgroupReduce('sum', 'f32', WG, 'addF32')}
${FLAT_WORKGROUP}
${entry(WG)}
  var acc = 0.0;
  for (var i = wg * ${WG}u + lid; i < P.n; i += P.groups * ${WG}u) { acc += x[i] * x[i]; }
  let s = sum(lid, acc);
  if (lid == 0u) { partial[P.outOffset + wg] = s; }
}`;

export async function sumSquaresWgsl(rt: Runtime, ts: readonly GpuTensor[]): Promise<number> {
  const plan = ts.flatMap((t) =>
    t.chunks.map((c) => {
      const n = c.rows * t.rowWidth;
      return { c, n, groups: Math.max(1, Math.min(MAX_GROUPS, Math.ceil(n / (WG * 8)))) };
    }),
  );
  const total = plan.reduce((a, p) => a + p.groups, 0);
  if (total === 0) return 0;
  const partial = rt.allocOut([total], 'sumSquares');
  let offset = 0;
  for (const p of plan) {
    rt.dispatch({
      key: 'sumSquares',
      wgsl: SUMSQ,
      params: P_SUMSQ,
      values: { n: p.n, groups: p.groups, outOffset: offset },
      buffers: [p.c.buffer, partial.buffer('sumSquares')],
      workgroups: [p.groups, 1, 1],
    });
    offset += p.groups;
  }
  try {
    const parts = await rt.read(partial);
    let s = 0;
    for (const v of parts) s += v;
    return s;
  } finally {
    rt.free(partial);
  }
}
