import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET_S, parseDeviceArgs } from '../../bench/device/args';
import { refusal } from '../../bench/device/gpu';
import { devicePeak, shareOfPeak } from '../../bench/device/peak';
import { FIRST_GUESS_MS_PER_PARAM, MEASUREMENTS_PER_CELL, MIN_MEASUREMENT_MS, gflopsFrom, matmulFits, msPerParam, planCell } from '../../bench/device/plan';
import { summarize, type FormatRun } from '../../bench/device/report';
import { deviceShape } from '../../bench/device/shapes';
import type { InferenceCell, Rate } from '../../bench/lib/types';

const rate = (median: number): Rate => ({ median, min: median, max: median, reps: 3, warmups: 1 });
const cell = (batch: number, prefill: number, decode: number): InferenceCell => ({
  batch,
  promptTokens: 128,
  prefillTokensPerS: rate(prefill),
  decodeTokensPerS: rate(decode),
});

describe('device bench flags', () => {
  it('defaults: both shapes, q4 then f16, the full budget, no peak given', () => {
    const a = parseDeviceArgs([])!;
    expect(a).toMatchObject({ quick: false, allowCpu: false, budgetS: DEFAULT_BUDGET_S.full, shapes: ['0.5b', '4b'], formats: ['q4', 'f16'] });
    expect(a.peakTflops).toBeNull();
    expect(a.out).toBeNull();
    expect(parseDeviceArgs(['--quick'])!.budgetS).toBe(DEFAULT_BUDGET_S.quick);
  });

  it('takes lists, a budget, a peak and an output file; refuses what it does not know', () => {
    const a = parseDeviceArgs(['--shapes', '4b', '--formats', 'F16,q4,f16', '--budget', '90', '--peak-tflops', '60', '--out', '/o/x.json', '--allow-cpu'])!;
    expect(a).toMatchObject({ shapes: ['4b'], formats: ['f16', 'q4'], budgetS: 90, peakTflops: 60, out: '/o/x.json', allowCpu: true });
    expect(() => parseDeviceArgs(['--formats', 'q3'])).toThrow('--formats takes a comma-separated list of f32, f16, q8, q4; got "q3"');
    expect(() => parseDeviceArgs(['--budget', '0'])).toThrow('--budget takes a positive number');
    expect(() => parseDeviceArgs(['--seed', '1.5'])).toThrow('--seed takes an integer');
    expect(parseDeviceArgs(['--help'])).toBeNull();
  });
});

describe('the time budget', () => {
  it('gives every model still to run its expected creation, then a share by parameter count of each measurement', () => {
    const plan = planCell(400_000, [1e6, 3e6], 0.01);
    if ('skipped' in plan) throw new Error(plan.skipped);
    expect(plan.createEstimateMs).toBe(10_000);
    // (400 s - 40 s of creations) x a quarter of the parameters over 3 measurements x a slack of 2.
    expect(plan.budgetMs).toBe(15_000);
    expect(plan.cheapMs).toBe(3_750);
    const last = planCell(300_000, [3e6], 0.01);
    expect(last).toMatchObject({ budgetMs: (300_000 - 30_000) / (MEASUREMENTS_PER_CELL * 2) });
  });

  it('gives a small model at least the minimum, and skips one that cannot get it even alone', () => {
    expect(planCell(30_000, [1e3, 1e9], 1e-5)).toMatchObject({ budgetMs: MIN_MEASUREMENT_MS });
    const over = planCell(20_000, [4e9], FIRST_GUESS_MS_PER_PARAM);
    expect(over).toEqual({
      skipped: expect.stringMatching(/^over the run's time budget: 20 s were left, and creating its weights was expected to take ~160 s/),
    });
  });

  it('plans creations with the slowest rate seen, or the first guess', () => {
    expect(msPerParam([])).toBe(FIRST_GUESS_MS_PER_PARAM);
    expect(
      msPerParam([
        { ms: 100, params: 1e6 },
        { ms: 500, params: 1e6 },
      ]),
    ).toBe(5e-4);
  });
});

describe('the peak and its share', () => {
  const h200 = { vendor: 'nvidia', architecture: 'hopper', device: '', description: 'NVIDIA H200' };

  it('knows the H200 from its name, takes --peak-tflops over it, and computes no share without a peak', () => {
    expect(devicePeak(h200, null)).toMatchObject({ tflops: 67, source: expect.stringContaining('H200') });
    expect(devicePeak(h200, 60)).toEqual({ tflops: 60, source: '--peak-tflops' });
    const none = devicePeak({ vendor: 'google', architecture: 'swiftshader', device: '', description: 'SwiftShader' }, null);
    expect(none).toEqual({ skipped: expect.stringContaining('pass --peak-tflops N') });
    expect(shareOfPeak(10, none)).toBe(none);
  });

  it('is GFLOP/s over the peak in GFLOP/s', () => {
    expect(shareOfPeak(33_500, { tflops: 67, source: 'x' })).toBe(0.5);
    // 2 FLOPs per multiply-accumulate: 1e9 MACs a token at 1000 tokens/s is 2000 GFLOP/s.
    expect(gflopsFrom(1e9, 1000)).toBe(2000);
  });
});

describe('the adapter check', () => {
  const swiftshader = { emulated: true, vendor: 'google', architecture: 'swiftshader', description: 'SwiftShader driver 5.0.0' };

  it('refuses a CPU emulator in one line unless --allow-cpu, and passes a GPU', () => {
    const why = refusal(swiftshader, false)!;
    expect(why).toMatch(/^the WebGPU adapter is a CPU emulator \(google \/ swiftshader \/ SwiftShader driver 5\.0\.0\), not a GPU: .*pass --allow-cpu/);
    expect(why).not.toContain('\n');
    expect(refusal(swiftshader, true)).toBeNull();
    expect(refusal({ ...swiftshader, emulated: false, vendor: 'nvidia' }, false)).toBeNull();
  });
});

describe('the shapes', () => {
  it('copies the real configs, and --quick shrinks them keeping each family and its flags', () => {
    const small = deviceShape('0.5b', false).config;
    expect(small).toMatchObject({ family: 'qwen2', hiddenSize: 896, numLayers: 24, vocabSize: 151936, qkvBias: true, tieWordEmbeddings: true });
    expect(deviceShape('4b', false).config).toMatchObject({ family: 'qwen3', hiddenSize: 2560, numLayers: 36, headDim: 128, qkNorm: true });
    const quick = deviceShape('4b', true);
    expect(quick.config).toMatchObject({ family: 'qwen3', qkNorm: true, tieWordEmbeddings: true, numLayers: 2, vocabSize: 512 });
    expect(quick.from).toBe('data/model-configs/Qwen3-4B.json, shrunk by --quick');
  });
});

describe('the summary', () => {
  it('names each model and format in one line, "-" where a figure was skipped', () => {
    const run = {
      format: 'q4',
      inference: { b1: cell(1, 500, 50), b16: { skipped: 'over' } },
      training: { skipped: 'not tried' },
      peakBytes: 3 * 2 ** 20,
    } as unknown as FormatRun;
    expect(summarize({ '4b': { shape: {} as never, formats: { q4: run, f16: { skipped: 'over the budget' } } } })).toEqual({
      '4b q4': { prefillTokensPerS: { b1: 500, b16: '-' }, decodeTokensPerS: { b1: 50, b16: '-' }, trainTokensPerS: '-', peakMiB: 3 },
      '4b f16': { skipped: 'over the budget' },
    });
  });
});

describe('the matmul sizes', () => {
  it('tries the next size only if the rate of the one before says its repetitions and warm-ups fit', () => {
    // 2 * 4096^3 * 8 FLOP at 10 TFLOP/s: 110 ms a repetition, 0.55 s for 3 and 2 warm-ups.
    expect(matmulFits({ n: 1024, productsPerRep: 1, gflops: 10_000 }, { n: 4096, productsPerRep: 8 }, 3, 20_000)).toBe(true);
    // At SwiftShader's 1.5 GFLOP/s the same repetition takes ~733 s.
    expect(matmulFits({ n: 1024, productsPerRep: 1, gflops: 1.5 }, { n: 4096, productsPerRep: 8 }, 3, 20_000)).toEqual({
      skipped: expect.stringMatching(/^over the time budget: at the 1024\^3 rate \(1.5 GFLOP\/s\) a repetition of 8 4096\^3 products would take ~733\.0 s/),
    });
  });
});
