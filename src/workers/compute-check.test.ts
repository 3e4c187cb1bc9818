import { describe, expect, it } from 'vitest';
import { MATMUL_WGSL, TILE, matmulCpu, matmulTolerance, maxAbsDiff, seededUniform } from './compute-check.shared';

describe('compute self-check, pure parts', () => {
  it('matmulCpu multiplies row-major matrices', () => {
    // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
    const a = new Float32Array([1, 2, 3, 4, 5, 6]);
    const b = new Float32Array([7, 8, 9, 10, 11, 12]);
    expect(Array.from(matmulCpu(a, b, 2, 3, 2))).toEqual([58, 64, 139, 154]);
  });

  it('matmulCpu rejects mismatched shapes', () => {
    expect(() => matmulCpu(new Float32Array(6), new Float32Array(6), 2, 2, 3)).toThrow(/shapes/);
  });

  it('maxAbsDiff finds the worst element and treats NaN and length mismatch as failure', () => {
    expect(maxAbsDiff([1, 2, 3], [1, 2.5, 2.75])).toBe(0.5);
    expect(maxAbsDiff([1, NaN], [1, 2])).toBe(Infinity);
    expect(maxAbsDiff([1], [1, 2])).toBe(Infinity);
  });

  it('tolerance accepts f32 rounding but not a wrong answer', () => {
    const m = 13, k = 17, n = 11;
    const a = seededUniform(m * k, 1);
    const b = seededUniform(k * n, 2);
    const want = matmulCpu(a, b, m, k, n);
    // Accumulating in f32 (as the shader does) stays within tolerance.
    const f32 = new Float32Array(m * n);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let acc = Math.fround(0);
        for (let p = 0; p < k; p++) acc = Math.fround(acc + Math.fround(a[i * k + p] * b[p * n + j]));
        f32[i * n + j] = acc;
      }
    expect(maxAbsDiff(f32, want)).toBeLessThanOrEqual(matmulTolerance(k));
    // Dropping one term of the dot product (an off-by-one in the kernel) does not.
    const wrong = new Float32Array(want);
    wrong[5] -= a[0 * k + 16] * b[16 * n + 5];
    expect(maxAbsDiff(wrong, want)).toBeGreaterThan(matmulTolerance(k));
  });

  it('seededUniform is deterministic and in [-1, 1)', () => {
    const x = seededUniform(1000, 42);
    expect(Array.from(x)).toEqual(Array.from(seededUniform(1000, 42)));
    expect(Array.from(x)).not.toEqual(Array.from(seededUniform(1000, 43)));
    for (const v of x) {
      expect(v).toBeGreaterThanOrEqual(-1);
      expect(v).toBeLessThan(1);
    }
  });

  it('the kernel source matches the tile size the dispatcher assumes', () => {
    expect(MATMUL_WGSL).toContain(`@workgroup_size(${TILE}, ${TILE})`);
    expect(MATMUL_WGSL).toContain(`array<f32, ${TILE * TILE}>`);
  });
});
