import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../gpu/cpu/backend';
import { gpuAdapterLabel, backendMatmul, matmulTolerance, maxAbsDiff, seededUniform } from './compute-check.shared';

describe('compute self-check, pure parts', () => {
  it('backendMatmul multiplies row-major matrices through the Backend interface', async () => {
    // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
    const a = new Float32Array([1, 2, 3, 4, 5, 6]);
    const b = new Float32Array([7, 8, 9, 10, 11, 12]);
    expect(Array.from(await backendMatmul(new CpuBackend(), a, b, 2, 3, 2))).toEqual([58, 64, 139, 154]);
  });

  it('backendMatmul rejects mismatched shapes and frees what it allocated', async () => {
    const be = new CpuBackend();
    await expect(backendMatmul(be, new Float32Array(6), new Float32Array(6), 2, 3, 3)).rejects.toThrow(/needs 9 values/);
    expect(be.memory().allocated).toBe(0);
    await backendMatmul(be, new Float32Array(6), new Float32Array(6), 2, 3, 2);
    expect(be.memory().allocated).toBe(0);
  });

  it('maxAbsDiff finds the worst element and treats NaN and length mismatch as failure', () => {
    expect(maxAbsDiff([1, 2, 3], [1, 2.5, 2.75])).toBe(0.5);
    expect(maxAbsDiff([1, NaN], [1, 2])).toBe(Infinity);
    expect(maxAbsDiff([1], [1, 2])).toBe(Infinity);
  });

  it('tolerance accepts f32 rounding but not a wrong answer', async () => {
    const m = 13,
      k = 17,
      n = 11;
    const a = seededUniform(m * k, 1);
    const b = seededUniform(k * n, 2);
    // The f64 CPU backend is the exact answer; the f32 one rounds as a GPU kernel does.
    const exact = await backendMatmul(new CpuBackend('f64'), a, b, m, k, n);
    const f32 = await backendMatmul(new CpuBackend(), a, b, m, k, n);
    expect(maxAbsDiff(f32, exact)).toBeLessThanOrEqual(matmulTolerance(k));
    // Dropping one term of the dot product (an off-by-one in a kernel) does not.
    const wrong = new Float32Array(exact);
    wrong[5] -= a[0 * k + 16] * b[16 * n + 5];
    expect(maxAbsDiff(wrong, exact)).toBeGreaterThan(matmulTolerance(k));
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

  it('gpuAdapterLabel names the adapter from its info', () => {
    expect(gpuAdapterLabel({ vendor: 'google', architecture: 'swiftshader', device: '', description: 'x' })).toBe('google swiftshader');
    expect(gpuAdapterLabel({ vendor: '', architecture: '', device: '', description: 'Some GPU' })).toBe('Some GPU');
    expect(gpuAdapterLabel(undefined)).toBe('');
  });
});
