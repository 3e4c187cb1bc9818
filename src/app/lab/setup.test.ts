import { describe, expect, it } from 'vitest';
import { makePreset } from '../../rl/presets';
import { parseStoredConfig } from '../../storage/stored-config';
import { parseRunConfig } from '../../runtime/run-config';
import { STORY_LR, STORY_MODEL } from '../../runtime/run-config';
import { allowedWeightFormats } from './policy-weights';
import {
  endsWithTab,
  nextRunSetup,
  DEFAULT_POLICY_SERVER,
  defaultSetup,
  methodVotes,
  policyServer,
  setupRoles,
  pickedFolderName,
  policyModelName,
  restoreSetup,
  rolesFor,
  setupProblems,
  toRunConfig,
  withHomework,
  withMethod,
  withScenario,
} from './setup';

describe('the default setup', () => {
  it('is a storyteller on a tiny hub story model with rules for every role, which runs in a laptop browser', () => {
    const s = defaultSetup();
    expect(s.scenario).toBe('storyteller');
    expect(s.policy).toEqual({ source: 'hub', hubId: STORY_MODEL, localName: '', backend: 'webgpu', weights: 'f16' });
    expect(Object.values(s.roles).map((r) => r.kind)).toEqual(['rules', 'rules', 'rules']);
    expect(s.method).toBe('combined');
    expect(setupProblems(s)).toEqual([]);
    expect(defaultSetup({ webgpu: false }).policy.backend).toBe('cpu');
  });

  it('becomes a run config both the run loop and storage accept, with the model reference and seed', () => {
    const config = toRunConfig(defaultSetup());
    expect(() => parseRunConfig(config)).not.toThrow();
    const stored = parseStoredConfig(config);
    expect(stored.modelRefs).toEqual({ policy: { id: STORY_MODEL, weightFormat: 'f16' } });
    expect(stored.seeds).toEqual({ run: 1 });
    expect(config.scenario).toEqual({ id: 'storyteller', subject: 'dog', name: 'Max', favourite: 'ball' });
    expect(config.models).toEqual({
      policy: { model: STORY_MODEL, backend: 'webgpu', weightFormat: 'f16' },
      user: { kind: 'rules' },
      judge: { kind: 'rules' },
      evaluator: { kind: 'rules' },
    });
    expect(config.lab).toEqual({ policySource: 'hub' });
    expect(config.label).toBe('storyteller · Combined · storyteller-demo');
    // The preset is the paper's combined preset with the laptop batch, rank and lr, and the storyteller's OPD term.
    expect(config.preset).toEqual(
      makePreset('combined', {
        optimizer: { lr: STORY_LR.combined },
        advantage: { opdTerm: 'forward-kl', forwardKl: { k: 16, tail: true } },
        batch: { size: 8 },
        finetune: { lora: { rank: 8 } },
        judge: { maxNewTokens: 512 },
      }),
    );
  });

  it('names a picked folder as the policy model', () => {
    const files = [{ name: 'config.json', webkitRelativePath: 'stories260K/config.json' }];
    expect(pickedFolderName(files)).toBe('stories260K');
    expect(pickedFolderName([{ name: 'config.json', webkitRelativePath: '' }])).toBe('picked files');
    const s = { ...defaultSetup(), policy: { source: 'files' as const, hubId: '', localName: '', backend: 'cpu' as const, weights: 'q8' as const } };
    expect(setupProblems(s)).toHaveLength(1);
    expect(setupProblems(s, { pickedFiles: 5 })).toEqual([]);
    expect(policyModelName(s, files)).toBe('stories260K');
    expect(policyModelName({ ...s, policy: { ...s.policy, localName: ' my model ' } }, files)).toBe('my model');
    expect(policyModelName(defaultSetup())).toBe(STORY_MODEL);
    const config = toRunConfig(s, 'stories260K');
    expect(config.models.policy).toEqual({ model: 'stories260K', backend: 'cpu', weightFormat: 'q8' });
    expect(config.lab.policySource).toBe('files');
  });

  it('carries the Weights choice into the run config and its model reference; full fine-tuning loads f32', () => {
    for (const weights of ['f16', 'q8', 'q4', 'f32'] as const) {
      const s = defaultSetup();
      s.policy.weights = weights;
      const config = toRunConfig(s);
      expect(config.models.policy.weightFormat).toBe(weights);
      expect(parseStoredConfig(config).modelRefs?.policy).toEqual({ id: STORY_MODEL, weightFormat: weights });
    }
    const full = defaultSetup();
    full.policy.weights = 'q4';
    full.preset = { ...full.preset, finetune: { ...full.preset.finetune, mode: 'full' } };
    expect(allowedWeightFormats(full)).toEqual(['f32']);
    expect(toRunConfig(full).models.policy.weightFormat).toBe('f32');
    // A setup remembered before the choice existed gets the default; a hand-edited value loads f16.
    const { weights: _, ...old } = defaultSetup().policy;
    expect(restoreSetup({ ...defaultSetup(), policy: old }).policy.weights).toBe('f16');
    expect(toRunConfig(restoreSetup({ ...defaultSetup(), policy: { ...old, weights: 'nf4' } })).models.policy.weightFormat).toBe('f16');
  });
});

describe('changing scenario and method', () => {
  it('a scenario brings its model, problems and schedule; the method keeps its paper preset shape', () => {
    const student = withScenario(defaultSetup(), 'student');
    expect(student.policy.hubId).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
    expect(student.preset.batch.size).toBe(16);
    const binary = withMethod(student, 'binary');
    expect(binary.preset.judge.binaryVotes).toBe(3);
    expect(binary.preset.judge.hintVotes).toBe(0);
    expect(binary.preset.advantage.weights).toEqual({ binary: 1, opd: 0 });
    const opd = withMethod(student, 'opd');
    expect(opd.preset.advantage.weights).toEqual({ binary: 0, opd: 1 });
    expect(toRunConfig(opd).method).toBe('opd');
  });

  it('puts the student’s and the teacher’s homework in the chat, or in workspace files with a model whose template has tools', () => {
    const student = withScenario(defaultSetup(), 'student');
    expect(toRunConfig(student).scenario).toEqual({ id: 'student' });
    const files = withHomework(student, 'workspace');
    expect(toRunConfig(files).scenario).toEqual({ id: 'student', homework: 'workspace' });
    expect(files.policy.hubId).toBe('Qwen/Qwen3-0.6B');
    expect(withScenario(files, 'teacher').policy.hubId).toBe('Qwen/Qwen3-0.6B');
    expect(toRunConfig(withScenario(files, 'teacher')).scenario).toEqual({ id: 'teacher', homework: 'workspace' });
    // The storyteller has no homework; a model the person named stays when they switch back.
    expect(toRunConfig(withScenario(files, 'storyteller')).scenario.id).toBe('storyteller');
    expect(withHomework(files, 'chat').policy.hubId).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
    const named = { ...files, policy: { ...files.policy, hubId: 'Qwen/Qwen2.5-0.5B-Instruct' } };
    expect(withHomework(named, 'chat').policy.hubId).toBe('Qwen/Qwen2.5-0.5B-Instruct');
    // A setup remembered from before the option has its homework in the chat.
    const { homework: _old, ...before } = student;
    void _old;
    expect(restoreSetup(JSON.parse(JSON.stringify(before))).homework).toBe('chat');
  });

  it('takes GSM8K from the hub in the reference evaluation’s order unless dataset order is picked', () => {
    const student = withScenario(defaultSetup(), 'student');
    const hub = { ...student, problems: { ...student.problems, source: 'gsm8k-hub' as const } };
    expect(toRunConfig(hub).problems).toEqual({ source: 'gsm8k-hub', count: 12, order: 'reference' });
    expect(toRunConfig({ ...hub, problems: { ...hub.problems, order: 'dataset' } }).problems).toMatchObject({ order: 'dataset' });
    // A setup saved before the option existed gets the reference order.
    const { order: _unused, ...old } = hub.problems;
    void _unused;
    expect(restoreSetup(JSON.parse(JSON.stringify({ ...hub, problems: old }))).problems.order).toBe('reference');
  });

  it('talk yourself runs one session, never evaluates, and asks only for the judge', () => {
    const talk = withScenario(defaultSetup(), 'talk');
    expect(rolesFor('talk')).toEqual(['judge']);
    const config = toRunConfig(talk);
    expect(config.scenario).toEqual({ id: 'talk' });
    expect(config.schedule.concurrentSessions).toBe(1);
    expect(config.schedule.evalEvery).toBe(0);
    // The policy the form named stays: the demo model offline, a chat model picked for the student.
    expect(talk.policy.hubId).toBe(STORY_MODEL);
    expect(withScenario(withScenario(defaultSetup(), 'student'), 'talk').policy.hubId).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
  });

  it('says how many votes each method takes, as the preset it would run with has them', () => {
    const s = defaultSetup();
    expect(['binary', 'opd', 'combined'].map((m) => methodVotes(s, m as 'binary'))).toEqual([
      'm = 3 binary votes',
      'm = 1 hint vote',
      'm = 1 binary vote and 1 hint vote',
    ]);
    // The chosen method's line follows the advanced panel.
    s.preset.judge.binaryVotes = 5;
    expect(methodVotes(s, 'combined')).toBe('m = 5 binary votes and 1 hint vote');
    expect(methodVotes(s, 'binary')).toBe('m = 3 binary votes');
  });

  it('a custom persona needs a model to play the user', () => {
    const custom = withScenario(defaultSetup(), 'custom');
    expect(custom.roles.user.kind).toBe('policy');
    expect(setupProblems(custom)).toEqual([]);
    const rulesUser = { ...custom, roles: { ...custom.roles, user: { kind: 'rules' as const } } };
    expect(setupProblems(rulesUser).join(' ')).toMatch(/needs a model to play it/);
    const noPreference = { ...custom, custom: { ...custom.custom, preference: ' ' } };
    expect(setupProblems(noPreference).join(' ')).toMatch(/preference/);
  });

  it('reports bad endpoint and preset values in words', () => {
    const s = defaultSetup();
    const endpoint = { ...s, roles: { ...s.roles, judge: { kind: 'endpoint' as const, baseUrl: 'localhost', model: '' } } };
    expect(setupProblems(endpoint).join(' ')).toMatch(/judge’s endpoint a base URL/);
    const badPreset = { ...s, preset: { ...s.preset, loss: { ...s.preset.loss, epsLow: 2 } } };
    expect(setupProblems(badPreset).join(' ')).toMatch(/epsLow/);
  });
});

describe('the form after its run has started', () => {
  it('empties the label, and after a talk run goes back to the default scenario, keeping method, seed and backend', () => {
    const talk = { ...withMethod(withScenario(defaultSetup(), 'talk'), 'opd'), label: 'me talking', seed: 7 };
    expect(talk.schedule.steps).not.toBe(defaultSetup().schedule.steps);
    const next = nextRunSetup(talk);
    expect(next.scenario).toBe(defaultSetup().scenario);
    expect(next.schedule).toEqual(defaultSetup().schedule);
    expect([next.label, next.method, next.seed, next.policy.backend]).toEqual(['', 'opd', 7, talk.policy.backend]);
    const story = { ...defaultSetup(), label: 'one', seed: 3 };
    expect(nextRunSetup(story)).toEqual({ ...story, label: '' });
    expect([endsWithTab({ scenario: { id: 'talk' } }), endsWithTab({ scenario: { id: 'storyteller' } }), endsWithTab(undefined)]).toEqual([true, false, false]);
  });
});

describe('remembering the setup', () => {
  it('restores a saved setup and falls back to defaults for anything unusable', () => {
    const s = withMethod(withScenario(defaultSetup(), 'teacher'), 'binary');
    s.seed = 42;
    const restored = restoreSetup(JSON.parse(JSON.stringify(s)));
    expect(restored).toEqual(s);
    expect(restoreSetup(null)).toEqual(defaultSetup());
    expect(restoreSetup({ version: 99 })).toEqual(defaultSetup());
    expect(restoreSetup({ ...s, preset: { method: 'nope' } })).toEqual(defaultSetup());
  });
});

describe('a policy on a server', () => {
  const onServer = (over: Partial<{ url: string; model: string }> = {}) => {
    const s = withScenario(defaultSetup(), 'student');
    return { ...s, policy: { ...s.policy, source: 'server' as const, server: { url: 'http://127.0.0.1:30000/v1/', model: 'Qwen3-0.6B', ...over } } };
  };

  it('runs with models.policy of kind server and no key in the config; the server judges, so the form asks for no judge', () => {
    const s = onServer();
    expect(setupProblems(s)).toEqual([]);
    expect(setupRoles(s)).toEqual(['user', 'evaluator']);
    const config = toRunConfig(s);
    expect(config.models.policy).toEqual({ kind: 'server', url: 'http://127.0.0.1:30000/v1', model: 'Qwen3-0.6B' });
    expect(config.lab).toEqual({ policySource: 'server' });
    expect(config.modelRefs.policy).toEqual({ id: 'Qwen3-0.6B @ http://127.0.0.1:30000/v1' });
    expect(config.label).toContain('Qwen3-0.6B');
    // What the lab stores and exports reads it back.
    expect(parseStoredConfig(config)).toMatchObject({ models: { policy: { kind: 'server' } } });
    expect(JSON.stringify(config)).not.toMatch(/apiKey/i);
  });

  it('says what to fix: the address and model, a frozen copy of a policy it does not have, the tool-call track', () => {
    // Said once, in the form's words, not again by the config's validator.
    expect(setupProblems(onServer({ url: 'localhost:30000', model: ' ' }))).toEqual([
      'Give the policy server a base URL (http:// or https://, ending in /v1) and the model name it serves (its GET /v1/models).',
    ]);
    const custom = { ...withScenario(onServer(), 'custom'), policy: onServer().policy };
    expect(custom.roles.user.kind).toBe('policy');
    expect(setupProblems(custom)).toContain('The user cannot be a frozen copy of a policy that runs on a server: choose rules, another model or an endpoint.');
    expect(setupProblems({ ...onServer(), track: 'toolcall' })[0]).toMatch(/^The tool-call track trains its policy here/);
  });

  it('is remembered with its server, and a remembered setup without one gets the default address', () => {
    const restored = restoreSetup(JSON.parse(JSON.stringify(onServer())));
    expect(restored.policy).toMatchObject({ source: 'server', server: { url: 'http://127.0.0.1:30000/v1/', model: 'Qwen3-0.6B' } });
    const bare = { ...onServer(), policy: { ...onServer().policy, server: undefined } };
    expect(policyServer(bare)).toEqual({ url: DEFAULT_POLICY_SERVER, model: '' });
  });
});
