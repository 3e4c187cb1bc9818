/**
 * Elementwise kernels: one invocation per four elements (a vec4) where every chunk's length
 * allows, else per element; one dispatch per buffer chunk (tensors of one shape are split
 * identically, so even split tensors map chunk to chunk). `add` lives here because the CPU
 * reference does it inline; siluMul and AdamW use the same generator.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, Params, type ScalarType } from '../webgpu/wgsl';

const WG = 256;

export interface MapBinding {
  /** Name the body uses: `name[i]`. */
  name: string;
  t: GpuTensor;
  write?: boolean;
}

/**
 * Builds (once per key) and dispatches `body` over every element index `i` of the bindings'
 * common shape; `name[i]` is a vec4 of four elements where chunk lengths are multiples of 4,
 * so a body must read the same either way (WGSL's arithmetic and builtins take both). `extra`
 * are further uniforms the body reads as `P.<name>`.
 */
export function mapKernel<K extends string>(
  rt: Runtime,
  key: string,
  bindings: readonly MapBinding[],
  body: string,
  extra?: { params: Params<K | 'n'>; values: Readonly<Record<K, number>> },
): void {
  const first = bindings[0].t;
  for (const b of bindings) {
    const sameChunks = b.t.chunks.every((c, i) => c.rows * b.t.rowWidth === first.chunks[i]?.rows * first.rowWidth);
    if (b.t.size !== first.size || b.t.chunks.length !== first.chunks.length || !sameChunks) {
      throw new EngineError(`${key}: tensors of shapes [${first.shape}] and [${b.t.shape}] differ in size`);
    }
    if (b.t.dtype !== 'f32') throw new EngineError(`${key}: expects f32 tensors, got an ${b.t.dtype} weight`);
  }
  const params = extra?.params ?? (N_ONLY as unknown as Params<K | 'n'>);
  // A quarter of the invocations: on a CPU-emulated adapter each costs far more than its element.
  const vec4 = first.chunks.every((c) => (c.rows * first.rowWidth) % 4 === 0);
  const wgsl = () => `${params.wgsl}
${bindings
  .map((b, i) => `@group(0) @binding(${i + 1}) var<storage, ${b.write ? 'read_write' : 'read'}> ${b.name}: array<${vec4 ? 'vec4<f32>' : 'f32'}>;`)
  .join('\n')}
${FLAT_WORKGROUP}
${entry(WG)}
  let i = wg * ${WG}u + lid;
  if (i >= P.n) { return; }
  ${body}
}`;
  first.chunks.forEach((c, ci) => {
    const n = (c.rows * first.rowWidth) / (vec4 ? 4 : 1);
    if (n === 0) return;
    rt.dispatch({
      key: `map:${key}:${vec4 ? 'v4' : 's'}`,
      wgsl,
      params,
      values: { ...(extra?.values ?? {}), n } as Record<K | 'n', number>,
      buffers: bindings.map((b) => b.t.chunks[ci].buffer),
      workgroups: Math.ceil(n / WG),
    });
  });
}

const N_ONLY = new Params({ n: 'u32' });
const SCALED = new Params({ n: 'u32', scale: 'f32' } satisfies Record<string, ScalarType>);

/** a + scale * b into a new tensor. */
export function addWgsl(rt: Runtime, a: GpuTensor, b: GpuTensor, scale: number): GpuTensor {
  const out = rt.alloc(a.shape);
  mapKernel(
    rt,
    'add',
    [
      { name: 'a', t: a },
      { name: 'b', t: b },
      { name: 'o', t: out, write: true },
    ],
    'o[i] = a[i] + P.scale * b[i];',
    {
      params: SCALED,
      values: { scale },
    },
  );
  return out;
}

/** a += scale * b. */
export function addInPlaceWgsl(rt: Runtime, a: GpuTensor, b: GpuTensor, scale: number): void {
  mapKernel(
    rt,
    'addInPlace',
    [
      { name: 'a', t: a, write: true },
      { name: 'b', t: b },
    ],
    'a[i] = a[i] + P.scale * b[i];',
    {
      params: SCALED,
      values: { scale },
    },
  );
}
