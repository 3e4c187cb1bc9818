/** CPU reference ops work on either precision: f32 to match the GPU, f64 for finite differences. */
export type Arr = Float32Array | Float64Array;

export function like(a: Arr, n: number): Arr {
  return a instanceof Float64Array ? new Float64Array(n) : new Float32Array(n);
}
