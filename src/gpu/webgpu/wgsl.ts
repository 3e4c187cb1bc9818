import { EngineError, EngineLimitError } from '../errors';
import { BITS, BLOCK, BLOCK_WORDS, GROUP, NF4_LEVELS } from '../quant';
import type { StorageDType } from './tensor';

/**
 * Shared WGSL building blocks. Kernels are template strings (0hq/WebGPT's habit); what more
 * than one kernel needs lives here once, as functions returning WGSL text.
 */

export type ScalarType = 'u32' | 'i32' | 'f32';

/**
 * A flat uniform struct of 4-byte scalars at @binding(0). Flat scalars need no padding under
 * WGSL's uniform layout rules (only arrays and nested structs round to 16), so field i sits at
 * byte 4*i and the host writes it with a DataView.
 */
export class Params<K extends string> {
  readonly names: readonly K[];
  constructor(readonly fields: Readonly<Record<K, ScalarType>>) {
    this.names = Object.keys(fields) as K[];
  }

  /** Binding size: a multiple of 16 keeps every backend's uniform block rules happy. */
  get bytes(): number {
    return Math.ceil((this.names.length * 4) / 16) * 16;
  }

  get wgsl(): string {
    const members = this.names.map((n) => `  ${n}: ${this.fields[n]},`).join('\n');
    return `struct Params {\n${members}\n}\n@group(0) @binding(0) var<uniform> P: Params;\n`;
  }

  write(view: DataView, offset: number, values: Readonly<Record<K, number>>): void {
    this.names.forEach((n, i) => {
      const v = values[n];
      if (v === undefined || !Number.isFinite(v)) {
        throw new EngineError(`kernel parameter ${n} is ${v}; check the op's numeric arguments (a NaN learning rate, say)`);
      }
      const o = offset + 4 * i;
      if (this.fields[n] === 'f32') view.setFloat32(o, v, true);
      else if (this.fields[n] === 'i32') view.setInt32(o, v, true);
      else view.setUint32(o, v, true);
    });
  }
}

/** `enable f16;` must be the first directive of a module that names f16 anywhere. */
export function header(f16: boolean): string {
  return f16 ? 'enable f16;\n' : '';
}

/**
 * How a kernel reads a weight: its storage format (quant.ts), with f16 bound as array<f16> where
 * the device has shader-f16 and as u32 words unpacked in the kernel (`f16p`) where it has not.
 */
export type WeightRead = 'f32' | 'f16' | 'f16p' | 'q8' | 'q4';

export function weightRead(dtype: StorageDType, shaderF16: boolean): WeightRead {
  return dtype === 'f16' && !shaderF16 ? 'f16p' : dtype;
}

/**
 * A storage binding of a weight and its loaders: `load<Name>(i)` returns value i (a padded index,
 * see GpuTensor.rowStride) as f32, and with `vec4` `load<Name>4(i)` returns values 4i..4i+3. A
 * kernel body is the same for every format; q8 and q4 dequantize here, code times group scale.
 */
export function weightBinding(binding: number, name: string, read: WeightRead, vec4: boolean): string {
  const Name = name[0].toUpperCase() + name.slice(1);
  const decl = (type: string) => `@group(0) @binding(${binding}) var<storage, read> ${name}: array<${type}>;\n`;
  if (read === 'f32' || read === 'f16') {
    return vec4
      ? `${decl(`vec4<${read}>`)}fn load${Name}4(i: u32) -> vec4<f32> { return vec4<f32>(${name}[i]); }\n`
      : `${decl(read)}fn load${Name}(i: u32) -> f32 { return f32(${name}[i]); }\n`;
  }
  if (read === 'f16p') {
    return vec4
      ? `${decl('u32')}fn load${Name}4(i: u32) -> vec4<f32> { return vec4<f32>(unpack2x16float(${name}[2u * i]), unpack2x16float(${name}[2u * i + 1u])); }\n`
      : `${decl('u32')}fn load${Name}(i: u32) -> f32 { return unpack2x16float(${name}[i >> 1u])[i & 1u]; }\n`;
  }
  // Value e sits in block e / BLOCK at word (e % BLOCK) / perWord, field e % perWord; its group's
  // scale is half (e / GROUP) % 2 of the block's last word. q8 codes are signed integers
  // (extractBits on i32 sign-extends); q4 codes index the NF4 levels.
  const bits = BITS[read];
  const perWord = 32 / bits;
  const words = BLOCK_WORDS[read];
  const levels = read === 'q4' ? `var<private> ${name}Levels = array<f32, 16>(${Array.from(NF4_LEVELS, (v) => v.toPrecision(9)).join(', ')});\n` : '';
  const locate = `  let blk = (e / ${BLOCK}u) * ${words}u;
  let w = ${name}[blk + (e % ${BLOCK}u) / ${perWord}u];
  let s = unpack2x16float(${name}[blk + ${words - 1}u])[(e / ${GROUP}u) % 2u];`;
  const field = (k: string) =>
    read === 'q8' ? `f32(extractBits(bitcast<i32>(w), ${k} * ${bits}u, ${bits}u))` : `${name}Levels[extractBits(w, ${k} * ${bits}u, ${bits}u)]`;
  // Four values never straddle a word: 4 divides perWord, and a vec4 index starts at a multiple of 4.
  return vec4
    ? `${decl('u32')}${levels}fn load${Name}4(i: u32) -> vec4<f32> {
  let e = 4u * i;
${locate}
  let f = e % ${perWord}u;
  return vec4<f32>(${field('f')}, ${field('(f + 1u)')}, ${field('(f + 2u)')}, ${field('(f + 3u)')}) * s;
}
`
    : `${decl('u32')}${levels}fn load${Name}(e: u32) -> f32 {
${locate}
  return ${field(`(e % ${perWord}u)`)} * s;
}
`;
}

/**
 * Grids larger than maxComputeWorkgroupsPerDimension (65535) fold into x and y; this recovers
 * the flat workgroup index. Workgroup ids are uniform, so branches on it may precede barriers.
 */
export const FLAT_WORKGROUP = /* wgsl */ `
fn flatWorkgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + wid.y * nwg.x; }
`;

/** The usual entry-point signature: flat workgroup index `wg`, local index `lid`. */
export function entry(wgSize: number): string {
  return `@compute @workgroup_size(${wgSize})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = flatWorkgroup(wid, nwg);`;
}

/** Mid-range f32 "minus infinity": WGSL constants may not be infinite, and exp() of it is 0. */
export const NEG_BIG = '-3.0e38';

/**
 * A tree reduction over the workgroup of values of `type` combined by WGSL function `combine`.
 * Must be called from uniform control flow by every invocation; the result is uniform and the
 * scratch array is free for the next call (workgroupUniformLoad ends with a barrier).
 */
export function workgroupReduce(name: string, type: string, wgSize: number, combine: string): string {
  if ((wgSize & (wgSize - 1)) !== 0) throw new EngineError(`workgroup size ${wgSize} is not a power of two`);
  return /* wgsl */ `
var<workgroup> ${name}Scratch: array<${type}, ${wgSize}>;
fn ${name}(lid: u32, v: ${type}) -> ${type} {
  ${name}Scratch[lid] = v;
  for (var s = ${wgSize / 2}u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (lid < s) { ${name}Scratch[lid] = ${combine}(${name}Scratch[lid], ${name}Scratch[lid + s]); }
  }
  return workgroupUniformLoad(&${name}Scratch[0]);
}
`;
}

/**
 * How a kernel that reduces along rows maps invocations to rows: `lanes` invocations share a row
 * and combine through a workgroup tree (a GPU, long rows), or each invocation takes whole rows
 * with no workgroup memory at all (short rows; a CPU-emulated adapter, where declaring workgroup
 * memory makes every invocation a coroutine, ~2 us each per workgroup on SwiftShader). Kernels
 * use `row` and `lane` (RowLanes.prelude), stride their loops by `lanes`, combine with
 * `reduce(...)` (the identity for one lane) and let `lane == 0` write.
 */
export class RowLanes {
  /** Workgroup size when each invocation takes a whole row. */
  static readonly ROWS_PER_WORKGROUP = 64;

  constructor(readonly lanes: number) {
    if (lanes < 1 || (lanes & (lanes - 1)) !== 0) throw new EngineError(`${lanes} lanes per row is not a power of two`);
  }

  /** `lanes` where workgroup memory is fast and rows are longer than `shortRow`, else 1. */
  static choose(workgroupMemory: boolean, rowLength: number, lanes: number, shortRow = 0): RowLanes {
    return new RowLanes(workgroupMemory && rowLength > shortRow ? lanes : 1);
  }

  get workgroupSize(): number {
    return this.lanes === 1 ? RowLanes.ROWS_PER_WORKGROUP : this.lanes;
  }

  /** Part of pipeline keys: kernels differ by lane count. */
  get key(): string {
    return `lanes${this.lanes}`;
  }

  /** The entry point plus `row` and `lane`; rows past `rowsExpr` return (uniformly, per workgroup, when lanes > 1). */
  prelude(rowsExpr: string): string {
    const rowLane = this.lanes === 1 ? `let row = wg * ${RowLanes.ROWS_PER_WORKGROUP}u + lid;\n  let lane = 0u;` : 'let row = wg;\n  let lane = lid;';
    return `${entry(this.workgroupSize)}
  ${rowLane}
  if (row >= ${rowsExpr}) { return; }`;
  }

  /** A reduction over the row's lanes (see workgroupReduce), or the identity for one lane. */
  reduce(name: string, type: string, combine: string): string {
    return this.lanes === 1 ? `fn ${name}(lid: u32, v: ${type}) -> ${type} { return v; }\n` : workgroupReduce(name, type, this.lanes, combine);
  }

  workgroups(rows: number): number {
    return Math.ceil(rows / (this.workgroupSize / this.lanes));
  }
}

export const ADD_F32 = 'fn addF32(a: f32, b: f32) -> f32 { return a + b; }\n';
export const MAX_F32 = 'fn maxF32(a: f32, b: f32) -> f32 { return max(a, b); }\n';

/** Workgroup count for a flat grid, folded to stay within the per-dimension limit. */
export function grid(n: number, maxPerDim: number): [number, number, number] {
  if (n <= maxPerDim) return [Math.max(1, n), 1, 1];
  const y = Math.ceil(n / maxPerDim);
  if (y > maxPerDim) throw new EngineLimitError(`${n} workgroups exceed this adapter's dispatch limit; split the op into smaller calls`);
  return [Math.ceil(n / y), y, 1];
}
