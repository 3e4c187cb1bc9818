/**
 * Sum of squares (gradient norms) on the GPU: per chunk of every tensor, a few workgroups each
 * reduce a strided share to one partial in a common buffer (or, where workgroup memory is slow,
 * each invocation writes its own partial: RowLanes with one lane); the partials of all tensors
 * are read back at once and added in f64 on the host. One read per global norm, not one per
 * tensor: a LoRA on every projection of a 28-layer model has 392 gradient tensors.
 */
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { ADD_F32, FLAT_WORKGROUP, Params, RowLanes } from '../webgpu/wgsl';

const LANES = 256;
const MAX_GROUPS = 256;
const P_SUMSQ = new Params({ n: 'u32', groups: 'u32', outOffset: 'u32' });

// A "row" is one partial: a workgroup's (lanes > 1) or one invocation's share of x.
const SUMSQ = (l: RowLanes) => `${P_SUMSQ.wgsl}
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> partial: array<f32>;
${ADD_F32}
${l.reduce('sum', 'f32', 'addF32')}
${FLAT_WORKGROUP}
${l.prelude('P.groups')}
  var acc = 0.0;
  for (var i = row * ${l.lanes}u + lane; i < P.n; i += P.groups * ${l.lanes}u) { acc += x[i] * x[i]; }
  let s = sum(lid, acc);
  if (lane == 0u) { partial[P.outOffset + row] = s; }
}`;

export async function sumSquaresWgsl(rt: Runtime, ts: readonly GpuTensor[]): Promise<number> {
  const lanes = new RowLanes(rt.options.workgroupMemory ? LANES : 1);
  // Partials of at least 8 values per invocation, each of LANES (or 64 single-lane) invocations.
  const perPartial = lanes.lanes === 1 ? 8 : LANES * 8;
  const maxPartials = lanes.lanes === 1 ? MAX_GROUPS * RowLanes.ROWS_PER_WORKGROUP : MAX_GROUPS;
  const plan = ts.flatMap((t) =>
    t.chunks.map((c) => {
      const n = c.rows * t.rowWidth;
      return { c, n, groups: Math.max(1, Math.min(maxPartials, Math.ceil(n / perPartial))) };
    }),
  );
  const total = plan.reduce((a, p) => a + p.groups, 0);
  if (total === 0) return 0;
  const partial = rt.allocOut([total], 'sumSquares');
  let offset = 0;
  for (const p of plan) {
    rt.dispatch({
      key: `sumSquares:${lanes.key}`,
      wgsl: () => SUMSQ(lanes),
      params: P_SUMSQ,
      values: { n: p.n, groups: p.groups, outOffset: offset },
      buffers: [p.c.buffer, partial.buffer('sumSquares')],
      workgroups: lanes.workgroups(p.groups),
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
