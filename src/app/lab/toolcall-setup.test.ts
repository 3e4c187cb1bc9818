import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { makePreset } from '../../rl/presets';
import { exampleConfig, parseAnyRunConfig, parseToolCallRunConfig } from '../../runtime/run-config';
import { parseStoredConfig } from '../../storage/stored-config';
import { ComparisonQueue, comparisonSetups } from './comparison';
import { nextSessionIndex } from './resume';
import { defaultSetup, presetOf, restoreSetup, setupProblems, setupRoles, toAnyRunConfig, withTrack, type LabSetup } from './setup';
import { TOOL_CALL_MODEL, toolCallServing, toToolCallRunConfig } from './toolcall-setup';

const toolSetup = (): LabSetup => withTrack(defaultSetup({ webgpu: false }), 'toolcall');

describe('the Setup on the tool-call track', () => {
  it('starts from the toolcall example: its preset, model, problems, rewards, group, steps and held-out problems', () => {
    const setup = toolSetup();
    const example = exampleConfig('toolcall');
    expect(setup.policy.hubId).toBe(TOOL_CALL_MODEL);
    expect(TOOL_CALL_MODEL).toBe('Qwen/Qwen3-0.6B');
    expect(setupRoles(setup)).toEqual(['judge']);
    expect(setupProblems(setup)).toEqual([]);
    const config = toAnyRunConfig(setup);
    expect(config.track).toBe('toolcall');
    expect(parseAnyRunConfig(config)).toEqual(config);
    expect(config.label).toBe('toolcall · Integrated · Qwen3-0.6B');
    const rest = { ...config, label: undefined };
    // Every field the CLI's example has, as the example has it (only the backend and the weight format are the form's).
    expect(rest).toEqual({
      ...example,
      label: undefined,
      models: { policy: { model: 'Qwen/Qwen3-0.6B', backend: 'cpu', weightFormat: 'f16' }, judge: { kind: 'rules' } },
      lab: { policySource: 'hub' },
      modelRefs: { policy: { id: 'Qwen/Qwen3-0.6B', weightFormat: 'f16' } },
      seeds: { run: 1 },
    });
    // Storage reads it as it reads a personal run's config.
    expect(parseStoredConfig(config).modelRefs).toEqual({ policy: { id: 'Qwen/Qwen3-0.6B', weightFormat: 'f16' } });
  });

  it('maps every field of the form to the run config', () => {
    const setup = toolSetup();
    setup.label = '  small ';
    setup.seed = 7;
    setup.policy = { source: 'files', hubId: '', localName: 'tiny', backend: 'webgpu', weights: 'q4' };
    setup.roles.judge = { kind: 'policy' };
    setup.toolcall = {
      rewardMode: 'outcome',
      groupSize: 2,
      maxSteps: 3,
      evalHeldOut: 4,
      problems: { source: 'builtin', count: 5 },
      schedule: { concurrentGroups: 1, steps: 2, evalEvery: 1 },
      sampling: { temperature: 0.8, topP: 0.9, topK: 5, maxNewTokens: 16 },
    };
    setup.preset.batch.size = 4;
    const config = toToolCallRunConfig(setup, 'tiny');
    expect(config).toMatchObject({
      label: 'small',
      track: 'toolcall',
      method: 'binary',
      seed: 7,
      models: { policy: { model: 'tiny', backend: 'webgpu', weightFormat: 'q4' }, judge: { kind: 'policy' } },
      problems: { source: 'builtin', count: 5 },
      toolcall: { rewardMode: 'outcome', groupSize: 2, maxSteps: 3, evalHeldOut: 4 },
      schedule: { concurrentGroups: 1, steps: 2, evalEvery: 1 },
      sampling: { policy: { temperature: 0.8, topP: 0.9, topK: 5, maxNewTokens: 16 } },
      lab: { policySource: 'files' },
      seeds: { run: 7 },
    });
    expect(config.preset.batch.size).toBe(4);
    expect(parseToolCallRunConfig(config)).toEqual(config);
  });

  it('lists what the run-config parser refuses, by field', () => {
    const setup = toolSetup();
    setup.toolcall.groupSize = 0;
    expect(setupProblems(setup).join(' ')).toMatch(/toolcall\.groupSize.*whole number from 1/);
    const noHeldOut = toolSetup();
    noHeldOut.toolcall.evalHeldOut = 0;
    expect(setupProblems(noHeldOut).join(' ')).toMatch(/toolcall\.evalHeldOut/);
    noHeldOut.toolcall.schedule.evalEvery = 0;
    expect(setupProblems(noHeldOut)).toEqual([]);
    // A personal method's preset is not the track's.
    const combined = { ...toolSetup(), preset: makePreset('combined') };
    expect(setupProblems(combined).join(' ')).toMatch(/preset\.method.*binary/);
    // The user and evaluator of the personal track are not asked for.
    const custom = { ...toolSetup(), scenario: 'custom' as const };
    expect(setupProblems(custom)).toEqual([]);
  });

  it('switching back brings the scenario’s preset and model; the tool-call fields are kept for the next switch', () => {
    const setup = toolSetup();
    setup.toolcall.groupSize = 3;
    setup.seed = 9;
    const personal = withTrack(setup, 'personal');
    expect(personal.preset).toEqual(defaultSetup().preset);
    expect(personal.policy.hubId).toBe(defaultSetup().policy.hubId);
    expect(personal.seed).toBe(9);
    expect(toAnyRunConfig(personal).track).toBeUndefined();
    expect(withTrack(personal, 'toolcall').toolcall.groupSize).toBe(3);
    expect(presetOf(setup)).toEqual(exampleConfig('toolcall').preset);
    expect(presetOf(personal)).toEqual(defaultSetup().preset);
  });

  it('is remembered across visits; a remembered setup from before the track existed is a personal one', () => {
    const setup = toolSetup();
    setup.toolcall.maxSteps = 4;
    expect(restoreSetup(JSON.parse(JSON.stringify(setup)))).toEqual(setup);
    const old = JSON.parse(JSON.stringify(defaultSetup())) as Partial<LabSetup>;
    delete old.track;
    delete old.toolcall;
    const restored = restoreSetup(old);
    expect(restored.track).toBe('personal');
    expect(restored.toolcall).toEqual(toolSetup().toolcall);
  });

  it('compares integrated step rewards with the outcome only, the rest of the setup the same', () => {
    const setup = toolSetup();
    setup.label = 'gsm8k';
    const setups = comparisonSetups(setup);
    expect(setups.map((s) => [s.label, s.toolcall.rewardMode])).toEqual([
      ['gsm8k · Integrated', 'integrated'],
      ['gsm8k · Outcome only', 'outcome'],
    ]);
    for (const s of setups) expect({ ...toAnyRunConfig(s), label: '', toolcall: null }).toEqual({ ...toAnyRunConfig(setups[0]), label: '', toolcall: null });
    const queue = new ComparisonQueue();
    expect(queue.begin(setup).toolcall.rewardMode).toBe('integrated');
    expect(queue.next()?.toolcall.rewardMode).toBe('outcome');
    expect(queue.next()).toBeNull();
  });

  it('plans memory for every rollout in flight and the last step’s context', () => {
    // The example: 2 groups of 8 rollouts; 8 steps of 256 new tokens after a prompt of at most 512.
    expect(toolCallServing(toolSetup().toolcall)).toEqual({ batch: 16, contextTokens: 512 + 8 * (256 + 32) });
  });

  it('a resumed tool-call run starts its groups after the last one logged', () => {
    const records = [{ session: 'g0.r1' }, { session: 'g4.r0' }, { session: 'g2.r3' }, {}] as RunRecord[];
    expect(nextSessionIndex(records)).toBe(5);
  });
});
