/**
 * The WebGPU-vs-CPU conformance suite, shared by the browser test (Chromium's WebGPU) and the
 * Node test (Dawn). Test-only module: it registers vitest suites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../../../src/gpu/cpu/backend';
import { DeviceLostError } from '../../../src/gpu/errors';
import { WebGPUBackend, type WebGPUBackendOptions } from '../../../src/gpu/webgpu/backend';
import { benchMatmul } from '../../../src/gpu/webgpu/bench';
import { opCases, randn, readOutputs, relError, splitCases, weightFormatCases, type OpCase } from './cases';
import { WEIGHT_FORMATS } from '../../../src/gpu/quant';
import { GpuTensor } from '../../../src/gpu/webgpu/tensor';

const TOL = 1e-4;

async function expectSame(c: OpCase, gpu: WebGPUBackend): Promise<void> {
  const cpu = new CpuBackend();
  const want = await readOutputs(cpu, await c.run(cpu));
  const got = await readOutputs(gpu, await c.run(gpu));
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    const err = relError(g, want[i]);
    expect(err, `${c.name}: output ${i} (${want[i].length} values) relative error ${err}`).toBeLessThan(c.tol ?? TOL);
  });
}

/**
 * Fails, naming the step, when a WebGPU promise has not settled in 60 s: the test's own
 * 300 s timeout would say only that the test hung, not which call did.
 */
function settlesWithin<T>(p: Promise<T>, step: string, ms = 60_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${step} had not settled after ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

export function defineWebGPUSuite(title: string, create: () => Promise<WebGPUBackend>): void {
  describe(title, () => {
    let gpu: WebGPUBackend;
    const variant = (opts: WebGPUBackendOptions) => new WebGPUBackend(gpu.device, gpu.adapter, gpu.f16, opts);

    beforeAll(async () => {
      gpu = await create();
    });
    afterAll(() => gpu?.destroy());

    // Both kernel families run on every adapter here, whichever this adapter would default to.
    describe("every op against the CPU reference, workgroup-memory kernels (a GPU's default)", () => {
      for (const c of opCases) it(c.name, () => expectSame(c, variant({ workgroupMemory: true })));
    });

    describe("every op against the CPU reference, register-only kernels (a CPU-emulated adapter's default)", () => {
      for (const c of opCases) it(c.name, () => expectSame(c, variant({ workgroupMemory: false })));
    });

    describe('attention, invocation-per-query (prefill) path', () => {
      for (const c of opCases.filter((c) => c.name.startsWith('attention '))) {
        it(c.name, () => expectSame(c, variant({ attentionDecodeMaxQueries: 0 })));
      }
    });

    describe('attention, workgroup-per-query (decode) path, short contexts included', () => {
      for (const c of opCases.filter((c) => c.name.startsWith('attention '))) {
        it(c.name, () => expectSame(c, variant({ attentionDecodeMinKeys: 0 })));
      }
    });

    for (const workgroupMemory of [true, false]) {
      describe(`matmul and linear, ${workgroupMemory ? 'tiled' : 'blocked'} kernel only`, () => {
        for (const c of opCases.filter((c) => /^(matmul|linear)/.test(c.name))) {
          it(c.name, () => expectSame(c, variant({ matvecMaxRows: 0, workgroupMemory })));
        }
      });
    }

    describe('tensors split by rows (1 KiB threshold)', () => {
      it('splits a 50 x 16 table into 4 buffers', () => {
        const be = variant({ splitBytes: 1024 });
        const t = be.tensor(randn(1, 800), [50, 16]) as GpuTensor;
        expect(t.chunks.map((c) => c.rows)).toEqual([16, 16, 16, 2]);
      });
      for (const workgroupMemory of [true, false]) {
        for (const c of splitCases) {
          it(`${c.name} (${workgroupMemory ? 'workgroup-memory' : 'register-only'} kernels)`, () =>
            expectSame(c, variant({ splitBytes: 1024, workgroupMemory })));
        }
      }
    });

    // f16 runs unpacked from u32 words here unless the adapter has shader-f16 (SwiftShader has
    // not; node.test.ts compiles the native variants on Dawn's null backend).
    for (const format of WEIGHT_FORMATS) {
      describe(`${format} weights against the CPU reference, dequantized as they are loaded`, () => {
        for (const workgroupMemory of [true, false]) {
          for (const splitBytes of [undefined, 2048]) {
            for (const c of weightFormatCases(format)) {
              const how = `${workgroupMemory ? 'workgroup-memory' : 'register-only'} kernels${splitBytes ? ', weights split by rows at 2 KiB' : ''}`;
              it(`${c.name} (${how})`, () => expectSame(c, variant({ workgroupMemory, splitBytes })));
            }
          }
        }
      });
    }

    it('memory(): live bytes rise and fall with tensors, peak keeps the high-water mark', () => {
      const be = variant({});
      const before = be.memory().allocated;
      const t = be.zeros([1000]);
      const u = be.zeros([3000]);
      expect(be.memory().allocated - before).toBeGreaterThanOrEqual(16000);
      be.dispose(t);
      be.dispose(u);
      expect(be.memory().allocated).toBe(before);
      expect(be.memory().peak).toBeGreaterThanOrEqual(before + 16000);
      be.resetPeakMemory();
      expect(be.memory().peak).toBe(before);
    });

    it('a long chain of ops spans several submits and recycles buffers', async () => {
      const be = variant({ maxDispatchesPerBatch: 7 });
      const cpu = new CpuBackend();
      // Each fresh upload likely lands in the buffer just freed while a pending add still reads
      // it: the upload must stay behind that add in command order.
      const run = async (b: CpuBackend | WebGPUBackend) => {
        let x = b.tensor(randn(70, 333), [333]);
        const y = b.tensor(randn(71, 333), [333]);
        for (let i = 0; i < 40; i++) {
          const next = b.add(x, y, 0.1);
          b.dispose(x);
          x = b.tensor(randn(72 + i, 333), [333]);
          b.addInPlace(x, next, 0.5);
          b.dispose(next);
          if (i % 10 === 9) await b.read(x);
        }
        return b.read(x);
      };
      expect(relError(await run(be), await run(cpu))).toBeLessThan(TOL);
    });

    it('benchMatmul reports GFLOP/s', async () => {
      const gflops = await benchMatmul(gpu, 128, 300);
      console.log(`[${title}] matmul 128^3: ${gflops.toFixed(3)} GFLOP/s`);
      expect(gflops).toBeGreaterThan(0);
    });

    it('after device loss, ops throw DeviceLostError', async () => {
      // A backend of its own: adapters are single-use, and the shared device must survive.
      const be = await settlesWithin(create(), 'acquiring a second adapter and device');
      const t = be.tensor(randn(80, 8), [8]);
      be.device.destroy();
      const info = await settlesWithin(be.lost, 'device.lost after device.destroy()');
      expect(info.reason).toBe('destroyed');
      expect(() => be.add(t, t)).toThrow(DeviceLostError);
      await expect(be.read(t)).rejects.toThrow(DeviceLostError);
    });
  });
}
