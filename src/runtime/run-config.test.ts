import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseHeader } from '../storage/runfile';
import { PresetError } from '../rl/errors';
import { configForArm, exampleConfig, parseAnyRunConfig, parseRunConfig, RunConfigError, type RunConfig } from './run-config';

/** Line 1 of a storyteller run file the lab exported before config and stored config were one type. */
const OLD_HEADER = JSON.parse(readFileSync(new URL('../../test/fixtures/run-file-v1-header.json', import.meta.url), 'utf8'));

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v));

describe('the one run config reader', () => {
  it('reads the config of a run file exported before the change, as storage does', () => {
    const stored = parseHeader(OLD_HEADER).run.config;
    const config = parseRunConfig(stored);
    expect(config).toEqual(OLD_HEADER.run.config);
    expect(config.lab).toEqual({ policySource: 'files' });
    expect(config.modelRefs?.policy.files?.['model.safetensors']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('round-trips every example', () => {
    for (const name of ['storyteller', 'student', 'teacher', 'toolcall'] as const) {
      const c = exampleConfig(name);
      expect(parseAnyRunConfig(copy(c))).toEqual(c);
    }
  });

  it.each([
    ['root', () => 42, /\(root\) must be a JSON object/],
    ['format', (c: any) => (c.format = 'x'), /format must be "nextstate-run-config"/],
    ['formatVersion', (c: any) => (c.formatVersion = 2), /formatVersion is 2; this version of the lab reads 1/],
    ['a misspelt field', (c: any) => (c.sheduel = {}), /sheduel is not a known field/],
    ['track', (c: any) => (c.track = 'other'), /track must be one of personal, toolcall/],
    ['scenario', (c: any) => (c.scenario = { id: 'pirate' }), /scenario is invalid/],
    ['method', (c: any) => (c.method = 'opd'), /method \(opd\) differs from preset.method/],
    ['policy model', (c: any) => (c.models.policy.model = ''), /models.policy.model must name a model folder or hub id/],
    ['policy weight format', (c: any) => (c.models.policy.weightFormat = 'nf4'), /models.policy.weightFormat must be one of f32, f16, q8, q4 \(or absent/],
    ['policy weight format type', (c: any) => (c.models.policy.weightFormat = { q4: true }), /models.policy.weightFormat must be one of/],
    ['user kind', (c: any) => (c.models.user = { kind: 'oracle' }), /models.user.kind must be one of rules, policy, engine, endpoint, transformers/],
    ['engine model', (c: any) => (c.models.judge = { kind: 'engine' }), /models.judge.model/],
    ['endpoint', (c: any) => (c.models.evaluator = { kind: 'endpoint', model: 'm' }), /models.evaluator needs baseUrl and model/],
    ['seed', (c: any) => (c.seed = 1.5), /seed must be an integer/],
    ['problems.source', (c: any) => (c.problems.source = 'web'), /problems.source must be builtin, gsm8k-hub or file/],
    ['problems.count', (c: any) => (c.problems.count = 0), /problems.count must be a whole number from 1 to 20,000/],
    ['topP', (c: any) => (c.sampling.policy.topP = 0), /sampling.policy.topP must be above 0 and at most 1/],
    ['maxNewTokens', (c: any) => (c.sampling.policy.maxNewTokens = 0), /sampling.policy.maxNewTokens/],
    ['schedule.steps', (c: any) => (c.schedule.steps = 0), /schedule.steps must be a whole number from 1 to 1,000,000,000/],
    ['schedule.evalEvery', (c: any) => (c.schedule.evalEvery = -1), /schedule.evalEvery must be a whole number from 0 to 1,000,000,000/],
  ])('refuses a bad %s, naming the field', (_name, mutate, message) => {
    const c = copy(exampleConfig('storyteller')) as RunConfig;
    const bad = mutate(c) === 42 ? 42 : c;
    expect(() => parseRunConfig(bad)).toThrow(RunConfigError);
    expect(() => parseRunConfig(bad)).toThrow(message);
  });

  it('reads each weight format of the policy, and a config without one (f16 on WebGPU, f32 on the CPU)', () => {
    for (const weightFormat of ['f32', 'f16', 'q8', 'q4'] as const) {
      for (const name of ['storyteller', 'toolcall'] as const) {
        const c = copy(exampleConfig(name));
        c.models.policy.weightFormat = weightFormat;
        expect(parseAnyRunConfig(copy(c)).models.policy.weightFormat).toBe(weightFormat);
      }
    }
    expect(parseRunConfig(parseHeader(OLD_HEADER).run.config).models.policy.weightFormat).toBeUndefined();
  });

  it('leaves the preset to its own check', () => {
    const c = copy(exampleConfig('storyteller')) as any;
    c.preset.loss.epsLow = -1;
    expect(() => parseRunConfig(c)).toThrow(PresetError);
  });

  it('takes the other-child hint source on the storyteller only, saying so in one line', () => {
    const story = configForArm(exampleConfig('storyteller'), 'opd-other-child');
    expect([story.method, story.preset.advantage.hintSource]).toEqual(['opd', 'other-child']);
    expect(parseRunConfig(copy(story))).toEqual(story);
    expect(exampleConfig('storyteller', undefined, 'combined-other-child').preset.advantage.hintSource).toBe('other-child');
    for (const name of ['student', 'teacher'] as const) {
      const other = configForArm(exampleConfig(name), 'combined-other-child');
      let error: unknown;
      try {
        parseRunConfig(copy(other));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RunConfigError);
      expect((error as Error).message).toMatch(/preset\.advantage\.hintSource.*"other-child".*use scenario "storyteller" or hintSource "judge" or "shuffled"/);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('upper bounds on every count of a config', () => {
  /** Every path of a number in `v`. */
  const numberPaths = (v: unknown, path: string[] = []): string[][] =>
    typeof v === 'number' ? [path] : typeof v === 'object' && v !== null ? Object.entries(v).flatMap(([k, x]) => numberPaths(x, [...path, k])) : [];
  const set = (c: any, path: string[], value: number) => {
    const parent = path.slice(0, -1).reduce((o, k) => o[k], c);
    parent[path.at(-1)!] = value;
  };
  /**
   * The numbers that are not counts of anything: rates, temperatures, weights, the seed, a
   * session's idle timeout (compared with clock times). Nothing is allocated or repeated by them,
   * so they have no upper bound of their own.
   */
  const NOT_COUNTS = new Set([
    'seed',
    'sampling.policy.temperature',
    'sampling.user.temperature',
    'preset.advantage.weights.binary',
    'preset.advantage.weights.opd',
    'preset.loss.klCoef',
    'preset.optimizer.lr',
    'preset.optimizer.weightDecay',
    'preset.optimizer.eps',
    'preset.finetune.lora.alpha',
    'preset.session.idleTimeoutMs',
  ]);

  it.each(['storyteller', 'student', 'toolcall'] as const)('refuses 1e12 in every count of the %s example, naming the field', (name) => {
    const example = exampleConfig(name);
    const unbounded: string[] = [];
    for (const path of numberPaths(example)) {
      const c = copy(example);
      set(c, path, 1e12);
      try {
        parseAnyRunConfig(c);
        unbounded.push(path.join('.'));
      } catch (e) {
        expect((e as Error).message).toContain(path.at(-1));
      }
    }
    expect(unbounded.filter((p) => !NOT_COUNTS.has(p))).toEqual([]);
  });

  it('refuses schedule.concurrentSessions of 1e8 at once, before any session exists', () => {
    const c = copy(exampleConfig('storyteller')) as any;
    c.schedule.concurrentSessions = 1e8;
    expect(() => parseRunConfig(c)).toThrow('run config: schedule.concurrentSessions must be a whole number from 1 to 1,024');
  });
});
