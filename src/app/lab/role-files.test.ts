import { describe, expect, it } from 'vitest';
import { pickedRoleFiles, roleFolderProblem } from './role-files';

function file(name: string, rel = ''): File {
  const f = new File(['x'], name);
  Object.defineProperty(f, 'webkitRelativePath', { value: rel });
  return f;
}

describe('picked role folders', () => {
  it('keeps each file\u2019s path inside the folder; loose ONNX files go under onnx/', () => {
    const folder = [file('config.json', 'judge/config.json'), file('model_q4.onnx', 'judge/onnx/model_q4.onnx')];
    expect(pickedRoleFiles(folder).map((f) => f.path)).toEqual(['config.json', 'onnx/model_q4.onnx']);
    expect(pickedRoleFiles([file('model.onnx'), file('model.onnx_data'), file('tokenizer.json')]).map((f) => f.path)).toEqual([
      'onnx/model.onnx',
      'onnx/model.onnx_data',
      'tokenizer.json',
    ]);
  });

  it('says what a folder lacks', () => {
    expect(roleFolderProblem('judge', [])).toMatch(/^Pick the judge\u2019s ONNX model folder/);
    expect(roleFolderProblem('user', [file('config.json', 'm/config.json'), file('model.safetensors', 'm/model.safetensors')])).toBe(
      'The user\u2019s folder lacks tokenizer.json, tokenizer_config.json, onnx/model*.onnx: pick a folder exported for transformers.js.',
    );
    const complete = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'].map((p) => file(p.split('/').pop()!, `m/${p}`));
    expect(roleFolderProblem('judge', complete)).toBeNull();
  });
});
