import { WebGPUUnavailableError } from '../errors';

export interface DeviceRequest {
  /** Use this device as is (its limits and features are what they are). */
  device?: GPUDevice;
  /** Request the device from this adapter instead of navigator.gpu's default. */
  adapter?: GPUAdapter;
  /** Enable shader-f16 when the adapter has it (default true). */
  preferF16?: boolean;
}

export interface AcquiredDevice {
  device: GPUDevice;
  adapter: GPUAdapter | null;
  f16: boolean;
}

/**
 * The limits an LLM needs beyond WebGPU's defaults (128 MiB bindings, 16 KiB workgroup memory):
 * each is raised to whatever the adapter allows, so a big embedding fits in as few buffers as
 * possible.
 */
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'maxUniformBufferBindingSize',
] as const;

function gpuOf(): GPU {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (!nav?.gpu) {
    throw new WebGPUUnavailableError(
      'WebGPU is not available here (navigator.gpu is missing). Use a recent Chrome or Edge (113+), ' +
        'Safari 26+ or Firefox 141+; on Linux enable chrome://flags/#enable-unsafe-webgpu and ' +
        '#enable-vulkan; in Node create the backend with createNodeWebGPUBackend() (the `webgpu` package), ' +
        'or use the CPU backend.',
    );
  }
  return nav.gpu;
}

export async function acquireDevice(req: DeviceRequest = {}): Promise<AcquiredDevice> {
  if (req.device) {
    return { device: req.device, adapter: req.adapter ?? null, f16: req.device.features.has('shader-f16') };
  }
  const adapter = req.adapter ?? (await gpuOf().requestAdapter({ powerPreference: 'high-performance' }));
  if (!adapter) {
    throw new WebGPUUnavailableError(
      'navigator.gpu exists but returned no adapter: the GPU may be blocklisted or the driver missing. ' +
        'Check chrome://gpu, update the graphics driver, or use the CPU backend.',
    );
  }
  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) {
    const v = adapter.limits[name];
    if (typeof v === 'number') requiredLimits[name] = v;
  }
  const f16 = req.preferF16 !== false && adapter.features.has('shader-f16');
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      requiredLimits,
      requiredFeatures: f16 ? ['shader-f16'] : [],
      label: 'next-state engine',
    });
  } catch (e) {
    throw new WebGPUUnavailableError(
      `the WebGPU adapter refused a device (${(e as Error).message}). Close other GPU-heavy tabs and retry, ` + 'or use the CPU backend.',
    );
  }
  return { device, adapter, f16 };
}
