/**
 * The device bench's adapter: a GPU, or a refusal in one line. A CPU emulator (SwiftShader) would
 * produce figures that say nothing about a GPU, and on a lent machine it would mean the Vulkan
 * driver was not found, which the figures must not hide.
 */
import { isCpuEmulated, type WebGPUBackend } from '../../src/gpu/webgpu/backend';
import { adapterReport } from '../lib/adapter';
import type { AdapterReport } from '../lib/types';

export interface DeviceAdapter extends AdapterReport {
  isFallbackAdapter: boolean;
  emulated: boolean;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
}

/** Why this adapter is not a GPU, or null when it is one (or when the caller allows a CPU). */
export function refusal(a: Pick<DeviceAdapter, 'emulated' | 'vendor' | 'architecture' | 'description'>, allowCpu: boolean): string | null {
  if (!a.emulated || allowCpu) return null;
  return (
    `the WebGPU adapter is a CPU emulator (${[a.vendor, a.architecture, a.description].filter(Boolean).join(' / ')}), not a GPU: ` +
    'the Vulkan driver of the GPU was not found (run.sh sets VK_DRIVER_FILES when /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json exists); pass --allow-cpu to measure it anyway'
  );
}

export function describeAdapter(be: WebGPUBackend): DeviceAdapter {
  const adapter = be.adapter!;
  return {
    ...adapterReport(adapter),
    isFallbackAdapter: adapter.info.isFallbackAdapter === true,
    emulated: isCpuEmulated(adapter),
    limits: { maxBufferSize: be.device.limits.maxBufferSize, maxStorageBufferBindingSize: be.device.limits.maxStorageBufferBindingSize },
  };
}
