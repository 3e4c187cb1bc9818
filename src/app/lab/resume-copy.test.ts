import { describe, expect, it } from 'vitest';
import { exampleConfig } from '../../runtime/run-config';
import { isLocalPath } from './model-location';
import { copyConfig, copyLabel, copyResumeProblem, defaultCopySteps } from './resume-copy';

const trained = { steps: 3, trained: true, hasAdapter: true };

describe('resuming an imported run as a copy', () => {
  it('goes on from a file with its adapter, or from one that never changed the policy', () => {
    const config = exampleConfig('storyteller', 'onnx-community/tiny', 'binary');
    expect(copyResumeProblem(config, trained)).toBeNull();
    expect(copyResumeProblem(config, { steps: 2, trained: false, hasAdapter: false })).toBeNull();
  });

  it('refuses in one line what it cannot go on from: no adapter, full fine-tuning, a policy on a server, an unreadable config', () => {
    const config = exampleConfig('storyteller', 'onnx-community/tiny', 'binary');
    expect(copyResumeProblem(config, { ...trained, hasAdapter: false })).toBe('Its file holds no adapter: export the run again with its adapter to resume it.');
    const full = { ...config, preset: { ...config.preset, finetune: { ...config.preset.finetune, mode: 'full' } } };
    expect(copyResumeProblem(full, trained)).toMatch(/^It is a full fine-tuning run: its file holds no adapter to go on from/);
    const remote = { ...config, models: { ...config.models, policy: { kind: 'server', url: 'http://127.0.0.1:30000/v1', model: 'm' } } };
    expect(copyResumeProblem(remote, trained)).toMatch(/^Its policy trained on a server/);
    expect(copyResumeProblem({ preset: config.preset }, trained)).toMatch(/^Its config is not one this lab runs \(.+\), so it cannot be resumed\.$/);
  });

  it('plans the rest of the steps, or as many again once they are done; keeps the recorded config and names the file', () => {
    expect(defaultCopySteps(8, 3)).toBe(8);
    expect(defaultCopySteps(8, 8)).toBe(16);
    const stored = { preset: exampleConfig('storyteller', 'm', 'binary').preset, seed: 7, seeds: { run: 7 }, schedule: { steps: 4, evalEvery: 2 } };
    expect(copyConfig(stored, 6)).toEqual({ ...stored, schedule: { steps: 6, evalEvery: 2 } });
    expect(stored.schedule.steps).toBe(4);
    expect(copyLabel('story', 'run.nsrun')).toBe('story, resumed from run.nsrun');
    expect(copyLabel('story', null)).toBe('story, resumed');
  });

  it('takes a policy named by a path for a folder to pick, and a hub id or URL for one to fetch', () => {
    for (const path of ['/home/me/model', './model', '../m', '~/m', 'C:\\models\\m', 'models\\m']) expect(isLocalPath(path), path).toBe(true);
    for (const id of ['onnx-community/Qwen3-0.6B-ONNX', 'http://localhost:5173/@fs/tmp/m', 'stories260K']) expect(isLocalPath(id), id).toBe(false);
  });
});
