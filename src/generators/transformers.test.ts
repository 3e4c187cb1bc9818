/** Which ONNX variant a transformers.js role runs: from a picked folder, and as the library picks it. */
import { describe, expect, it } from 'vitest';
import { dtypeInFolder, effectiveDtype } from './transformers';

describe('dtypeInFolder', () => {
  const folder = ['config.json', 'onnx/model.onnx', 'onnx/model_q4.onnx', 'onnx/model_q4f16.onnx', 'onnx/model_quantized.onnx'];

  it('takes the variant that suits the device among those the folder holds', () => {
    expect(dtypeInFolder(folder, 'wasm')).toBe('q8');
    expect(dtypeInFolder(folder, 'webgpu', true)).toBe('q4f16');
    // Without shader-f16 the f16 variants are passed over while another is there.
    expect(dtypeInFolder(folder, 'webgpu', false)).toBe('q4');
    expect(dtypeInFolder(['onnx/model_fp16.onnx'], 'webgpu', false)).toBe('fp16');
    expect(dtypeInFolder(['onnx/model.onnx'], 'wasm')).toBe('fp32');
  });

  it('is null for a folder without ONNX weights', () => {
    expect(dtypeInFolder(['config.json', 'model.safetensors', 'model.onnx'], 'wasm')).toBeNull();
  });
});

describe('effectiveDtype', () => {
  it('is the asked one, else config.json transformers.js_config per device or overall, else the library default', () => {
    expect(effectiveDtype('q4', {}, 'wasm')).toBe('q4');
    const config = { 'transformers.js_config': { dtype: 'q4', device_config: { webgpu: { dtype: { model: 'q4f16' } } } } };
    expect(effectiveDtype(undefined, config, 'webgpu')).toBe('q4f16');
    expect(effectiveDtype(undefined, config, 'wasm')).toBe('q4');
    expect(effectiveDtype(undefined, {}, 'wasm')).toBe('q8');
    expect(effectiveDtype(undefined, { 'transformers.js_config': { dtype: 'auto' } }, 'webgpu')).toBe('fp32');
  });
});
