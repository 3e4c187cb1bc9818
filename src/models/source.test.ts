/** Picked model folders: files by their path in the folder, each file under its kind's cap. */
import { describe, expect, it } from 'vitest';
import { FileListSource, MAX_MODEL_FILE_BYTES, modelFileLimit, pickedModelFiles } from './source';

const file = (text: string, name: string, webkitRelativePath = '') => Object.assign(new File([text], name), { webkitRelativePath });

describe('a picked model folder', () => {
  it('keys files by their path in the folder: a nested checkpoint-500/config.json is not the config.json', async () => {
    const picked = pickedModelFiles([
      file('{"top": true}', 'config.json', 'Qwen3-0.6B/config.json'),
      file('{"nested": true}', 'config.json', 'Qwen3-0.6B/checkpoint-500/config.json'),
    ]);
    expect(picked.map((p) => p.path)).toEqual(['config.json', 'checkpoint-500/config.json']);
    const source = new FileListSource(picked);
    expect(new TextDecoder().decode(await source.bytes('config.json'))).toBe('{"top": true}');
    // The other order too: the last picked must not win.
    const reversed = new FileListSource([...picked].reverse());
    expect(new TextDecoder().decode(await reversed.bytes('config.json'))).toBe('{"top": true}');
  });

  it('takes files picked one by one by their names', async () => {
    const source = new FileListSource(pickedModelFiles([file('{}', 'tokenizer.json')]));
    expect(await source.has('tokenizer.json')).toBe(true);
  });

  it('refuses a file over the cap for its kind from its size, before reading it', async () => {
    expect(modelFileLimit('model-00001-of-00002.safetensors')).toBeGreaterThan(MAX_MODEL_FILE_BYTES);
    expect(modelFileLimit('config.json')).toBe(MAX_MODEL_FILE_BYTES);
    const huge = { size: 65_000_000, arrayBuffer: () => Promise.reject(new Error('read')) } as unknown as Blob;
    await expect(new FileListSource([{ path: 'config.json', file: huge }]).bytes('config.json')).rejects.toThrow(
      'picked files/config.json is 65 MB, more than the 64 MB a model file of its kind may be; it is not a model file of a supported checkpoint.',
    );
  });
});
