/**
 * WebGPU adapter probe for the boot page: ask the browser for an adapter and turn what it
 * reports into plain data the UI can show. The formatting and the "what to do" advice are pure
 * functions (tested in Node); only `probeGpuAdapter` touches `navigator.gpu`.
 */

/** The limits that decide what the lab can run: model size per buffer, kernel tile sizes. */
export const KEY_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxStorageBuffersPerShaderStage',
] as const;

export type KeyLimit = (typeof KEY_LIMITS)[number];

/** Limits measured in bytes (shown as KiB/MiB/GiB); the rest are counts. */
const BYTE_LIMITS: ReadonlySet<KeyLimit> = new Set<KeyLimit>(['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize']);

export interface LimitRow {
  name: KeyLimit;
  value: number;
  /** Human-readable value, e.g. "1 GiB (1,073,741,824 bytes)" or "256". */
  display: string;
}

export interface GpuAdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A software or otherwise limited adapter (SwiftShader reports true). */
  isFallbackAdapter: boolean;
  shaderF16: boolean;
  /** Every feature the adapter offers, sorted. */
  features: string[];
  limits: LimitRow[];
}

/** What to tell a person whose browser gave us no usable WebGPU. */
export interface WebGpuHelp {
  platform: Platform;
  steps: string[];
}

export type Platform = 'windows' | 'mac' | 'linux' | 'android' | 'ios' | 'other';

export type ProbeResult =
  | { kind: 'ok'; adapter: GpuAdapterSummary }
  /** navigator.gpu is missing (old browser, flag off, or not a secure context). */
  | { kind: 'no-webgpu'; reason: string; help: WebGpuHelp }
  /** navigator.gpu exists but requestAdapter() returned null or threw. */
  | { kind: 'no-adapter'; reason: string; help: WebGpuHelp };

/** The parts of a GPUAdapter the summary reads; lets tests pass plain objects. */
export interface GpuAdapterLike {
  readonly info?: Partial<Pick<GPUAdapterInfo, 'vendor' | 'architecture' | 'device' | 'description' | 'isFallbackAdapter'>>;
  readonly features: { has(name: string): boolean; forEach(cb: (name: string) => void): void };
  readonly limits: Partial<Record<KeyLimit, number>>;
  /** Older Chromium (before 127) exposed this instead of `info`. */
  readonly isFallbackAdapter?: boolean;
}

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 1073741824 -> "1 GiB"; 32768 -> "32 KiB"; 1536 -> "1.5 KiB"; 100 -> "100 bytes". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return String(n);
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const rounded = u === 0 ? String(v) : String(Math.round(v * 100) / 100);
  return `${rounded} ${UNITS[u]}`;
}

/** Thousands separators without depending on the runtime locale. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Math.trunc(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatLimit(name: KeyLimit, value: number): string {
  if (BYTE_LIMITS.has(name)) {
    return value < 1024 ? formatBytes(value) : `${formatBytes(value)} (${formatCount(value)} bytes)`;
  }
  return formatCount(value);
}

export function summarizeGpuAdapter(adapter: GpuAdapterLike): GpuAdapterSummary {
  const info = adapter.info ?? {};
  const features: string[] = [];
  adapter.features.forEach((f) => features.push(f));
  features.sort();
  const limits: LimitRow[] = [];
  for (const name of KEY_LIMITS) {
    const value = adapter.limits[name];
    if (typeof value === 'number') limits.push({ name, value, display: formatLimit(name, value) });
  }
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false),
    shaderF16: adapter.features.has('shader-f16'),
    features,
    limits,
  };
}

/** A one-line name for the adapter: "google swiftshader", "apple metal-3", ... */
export function gpuAdapterLabel(s: GpuAdapterSummary): string {
  const parts = [s.vendor, s.architecture, s.device].filter((p) => p.length > 0);
  if (parts.length === 0) return s.description || 'unnamed adapter';
  return parts.join(' ');
}

export function detectPlatform(userAgent: string): Platform {
  const ua = userAgent.toLowerCase();
  if (ua.includes('android')) return 'android';
  if (/iphone|ipad|ipod/.test(ua)) return 'ios';
  if (ua.includes('windows')) return 'windows';
  if (ua.includes('mac os') || ua.includes('macintosh')) return 'mac';
  if (ua.includes('linux') || ua.includes('x11') || ua.includes('cros')) return 'linux';
  return 'other';
}

const BROWSERS = 'Use Chrome or Edge 113 or newer, Safari 26 or newer, or Firefox 141 or newer on Windows.';

/** Advice for a browser without usable WebGPU, tuned to the platform in the user agent. */
export function webGpuHelp(userAgent: string, opts: { secureContext?: boolean } = {}): WebGpuHelp {
  const platform = detectPlatform(userAgent);
  const steps: string[] = [];
  if (opts.secureContext === false) {
    steps.push('WebGPU only exists on secure pages: open the lab over https:// or from http://localhost.');
  }
  steps.push(BROWSERS);
  if (platform === 'linux') {
    steps.push('On Linux, Chrome ships WebGPU switched off: open chrome://flags, enable #enable-unsafe-webgpu and #enable-vulkan, then restart the browser.');
  } else if (platform === 'mac') {
    steps.push('On macOS, Safari 26 has WebGPU on by default; Chrome 113+ works too.');
  } else if (platform === 'android') {
    steps.push('On Android, Chrome 121 or newer on Android 12+ with a supported GPU has WebGPU.');
  } else if (platform === 'ios') {
    steps.push('On iPhone and iPad, WebGPU needs iOS/iPadOS 26 (Safari 26).');
  }
  steps.push('If WebGPU is on but no adapter appears, the GPU may be blocklisted: see chrome://gpu for details.');
  return { platform, steps };
}

interface NavigatorLike {
  readonly gpu?: Pick<GPU, 'requestAdapter'>;
  readonly userAgent: string;
}

/** Ask for an adapter and summarize it, or explain why there is none. Never throws. */
export async function probeGpuAdapter(nav: NavigatorLike = navigator, secureContext: boolean | undefined = globalThis.isSecureContext): Promise<ProbeResult> {
  const help = webGpuHelp(nav.userAgent, { secureContext });
  if (!nav.gpu) {
    const reason =
      secureContext === false
        ? 'This page is not a secure context, so the browser hides WebGPU (navigator.gpu is missing).'
        : 'This browser does not offer WebGPU (navigator.gpu is missing).';
    return { kind: 'no-webgpu', reason, help };
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await nav.gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return { kind: 'no-adapter', reason: `requestAdapter() failed: ${errorText(e)}`, help };
  }
  if (!adapter) {
    return {
      kind: 'no-adapter',
      reason: 'WebGPU is present but the browser returned no adapter (GPU disabled or blocklisted).',
      help,
    };
  }
  return { kind: 'ok', adapter: summarizeGpuAdapter(adapter) };
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
