/**
 * The Setup's "ONNX model through transformers.js" choice for a role: a hub id, or a folder of
 * ONNX files picked like the policy's, with what the folder lacks said before the start.
 */
import { describe, expect, it, vi } from 'vitest';
import { flushSync } from 'svelte';
import { userEvent } from 'vitest/browser';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import { toRunConfig } from '../lab/setup';
import Setup from './Setup.svelte';

vi.setConfig({ testTimeout: 30_000 });

const controller = labControllers('role-field-test');
const problems = (t: HTMLElement) => t.querySelector('.problems')?.textContent ?? '';

describe('a role on transformers.js', () => {
  it('takes a hub id, or a picked folder of ONNX files, and says what the folder lacks', async () => {
    const lab = await controller();
    using view = render(Setup, { lab });
    const t = view.target;
    const judgeKind = [...t.querySelectorAll('label')].find((l) => l.querySelector('span')?.textContent?.startsWith('Judge'))!.querySelector('select')!;
    await userEvent.selectOptions(judgeKind, 'transformers');
    flushSync();
    expect(lab.setup.roles.judge).toMatchObject({ kind: 'transformers' });
    expect(t.querySelector('input[placeholder="onnx-community/Qwen3-0.6B-ONNX"]')).not.toBeNull();

    const role = judgeKind.closest('.role')!;
    const folderRadio = [...role.querySelectorAll('label')].find((l) => l.textContent?.includes('A folder on this computer'))!.querySelector('input')!;
    await userEvent.click(folderRadio);
    flushSync();
    expect(lab.setup.roles.judge).toMatchObject({ kind: 'transformers', source: 'files' });
    expect(problems(t)).toMatch(/Pick the judge’s ONNX model folder/);

    expect(t.querySelector('[data-testid="judge-folder"]')).not.toBeNull();
    const picker = t.querySelector<HTMLInputElement>('[data-testid="judge-files"]')!;
    await userEvent.upload(picker, [new File(['{}'], 'config.json'), new File(['x'], 'model.safetensors')]);
    flushSync();
    expect(problems(t)).toMatch(/The judge’s folder lacks tokenizer\.json, tokenizer_config\.json, onnx\/model\*\.onnx/);

    const complete = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model_q4.onnx'].map((n) => new File(['x'], n));
    await userEvent.upload(picker, complete);
    flushSync();
    expect(lab.roleFiles.judge).toHaveLength(4);
    expect(problems(t)).not.toMatch(/judge/);
    const device = [...role.querySelectorAll('label')].find((l) => l.textContent?.startsWith('judge: device'))!.querySelector('select')!;
    await userEvent.selectOptions(device, 'wasm');
    flushSync();
    expect(toRunConfig(lab.setup).models.judge).toMatchObject({ kind: 'transformers', source: 'files', device: 'wasm' });
  });
});
