/**
 * Dedicated worker for the compute self-check: gets its own WebGPU device, runs the tiled WGSL
 * matmul from compute-check.shared.ts on the inputs it is sent, and posts the result back.
 * Proves that WebGPU works inside a worker under the app's COOP/COEP/CSP, as the policy
 * engine will need.
 */
import { MATMUL_WGSL, TILE, type ComputeCheckRequest, type ComputeCheckResponse } from './compute-check.shared';

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (ev: MessageEvent<ComputeCheckRequest>) => {
  const req = ev.data;
  let reply: ComputeCheckResponse;
  try {
    const { c, adapter, gpuMs } = await runMatmul(req);
    reply = { id: req.id, ok: true, c, adapter, gpuMs };
    scope.postMessage(reply, [c.buffer]);
  } catch (e) {
    reply = { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
    scope.postMessage(reply);
  }
};

async function runMatmul({ m, k, n, a, b }: ComputeCheckRequest) {
  const gpu = (scope.navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) throw new Error('navigator.gpu is missing inside the worker');
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter inside the worker');
  const device = await adapter.requestDevice();
  const info = adapter.info;
  const adapterName = [info.vendor, info.architecture, info.device].filter(Boolean).join(' ') || info.description;
  try {
    const t0 = performance.now();
    device.pushErrorScope('validation');
    const storage = (data: Float32Array<ArrayBuffer>) => {
      const buf = device.createBuffer({
        size: Math.max(16, data.byteLength),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      device.queue.writeBuffer(buf, 0, data);
      return buf;
    };
    const dims = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(dims, 0, new Uint32Array([m, k, n, 0]));
    const bufA = storage(a);
    const bufB = storage(b);
    const outBytes = Math.max(16, m * n * 4);
    const bufC = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const readback = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

    const module = device.createShaderModule({ code: MATMUL_WGSL });
    const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const bind = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [dims, bufA, bufB, bufC].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(Math.ceil(n / TILE), Math.ceil(m / TILE));
    pass.end();
    enc.copyBufferToBuffer(bufC, 0, readback, 0, outBytes);
    device.queue.submit([enc.finish()]);
    const err = await device.popErrorScope();
    if (err) throw new Error(`WebGPU validation error: ${err.message}`);
    await readback.mapAsync(GPUMapMode.READ);
    const c = new Float32Array(readback.getMappedRange().slice(0, m * n * 4));
    readback.unmap();
    return { c, adapter: adapterName, gpuMs: performance.now() - t0 };
  } finally {
    device.destroy();
  }
}
