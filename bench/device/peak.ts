/**
 * The device's peak FP32 rate, against which the matmul's GFLOP/s is read. The engine's WGSL
 * kernels multiply on the FP32 cores (WebGPU exposes no tensor cores), so the FP32 non-tensor
 * peak is the ceiling, not the bf16 tensor-core rate a datasheet leads with.
 */
import type { AdapterReport, Maybe } from '../lib/types';
import { round } from '../lib/stats';

export interface Peak {
  tflops: number;
  source: string;
}

const KNOWN: { match: RegExp; peak: Peak }[] = [
  {
    match: /H200/i,
    peak: { tflops: 67, source: 'NVIDIA H200 SXM datasheet: FP32 67 TFLOP/s (H200 NVL: 60); non-tensor FP32, what WGSL kernels run on' },
  },
  {
    match: /H100/i,
    peak: { tflops: 67, source: 'NVIDIA H100 SXM datasheet: FP32 67 TFLOP/s (H100 PCIe: 51); non-tensor FP32, what WGSL kernels run on' },
  },
];

type Named = Pick<AdapterReport, 'vendor' | 'architecture' | 'device' | 'description'>;

/** --peak-tflops wins; else a known adapter's datasheet figure; else no share is computed. */
export function devicePeak(adapter: Named, overrideTflops: number | null): Maybe<Peak> {
  if (overrideTflops !== null) return { tflops: overrideTflops, source: '--peak-tflops' };
  const name = `${adapter.vendor} ${adapter.architecture} ${adapter.device} ${adapter.description}`;
  const known = KNOWN.find((k) => k.match.test(name));
  return known ? known.peak : { skipped: `no peak FP32 rate is known for the adapter "${name.trim()}"; pass --peak-tflops N` };
}

/** GFLOP/s over the peak (a fraction, 0.25 = a quarter of the peak). */
export function shareOfPeak(gflops: number, peak: Maybe<Peak>): Maybe<number> {
  return 'skipped' in peak ? peak : round(gflops / (peak.tflops * 1000));
}
