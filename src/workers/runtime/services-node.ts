/**
 * Services for a headless run in Node: the policy on the engine (CPU, or WebGPU through the
 * `webgpu` package) and the judge, user and evaluator each from its spec. The browser builds
 * the same RunServices from web workers.
 */
import { readFile } from 'node:fs/promises';
import type { Backend } from '../../gpu/backend';
import { Policy } from '../../gpu/policy';
import { HubSource, type ModelSource } from '../../gpu/source';
import { DirSource } from '../../gpu/source-node';
import { existsSync } from 'node:fs';
import { OpenAICompatibleGenerator } from '../../sims/endpoint';
import { EngineGenerator } from '../../sims/engine-generator';
import type { TextGenerator } from '../../sims/generator';
import { createRules } from '../../sims/rules/index';
import { createScenario } from '../../sims/scenarios/index';
import { EnginePolicyService } from './policy-service';
import type { GeneratorSpec, RunConfig } from './run-config';
import type { RunServices } from './runloop';

export function nodeModelSource(model: string): ModelSource {
  return existsSync(model) ? new DirSource(model) : new HubSource(model, { cacheStorage: null });
}

/** What building a model-backed generator needs: the loaded policy and a cache of other engine models. */
export interface GeneratorContext {
  policyModel: Policy;
  /** The policy's folder or hub id, for labels. */
  policyId: string;
  backend: Backend;
  /** Engine models loaded so far, by folder or hub id (a model shared by two roles loads once). */
  engines: Map<string, Policy>;
}

/** A judge, user or evaluator from a spec that is not rules (each track has its own rules). */
export async function nodeGenerator(role: string, spec: Exclude<GeneratorSpec, { kind: 'rules' }>, ctx: GeneratorContext): Promise<TextGenerator> {
  switch (spec.kind) {
    case 'policy':
      return new EngineGenerator(ctx.policyModel, `engine: ${ctx.policyId} (frozen base)`);
    case 'engine': {
      if (!ctx.engines.has(spec.model)) ctx.engines.set(spec.model, await Policy.load(nodeModelSource(spec.model), ctx.backend));
      return new EngineGenerator(ctx.engines.get(spec.model)!);
    }
    case 'endpoint':
      // Keys never live in a run config: Node takes them from the environment.
      return new OpenAICompatibleGenerator({ baseUrl: spec.baseUrl, model: spec.model, apiKey: process.env.NEXTSTATE_API_KEY });
    case 'transformers':
      throw new Error(`models.${role}: transformers.js models run in the lab page; for headless runs use rules, policy, engine or endpoint`);
  }
}

export async function createNodeServices(config: RunConfig, backend: Backend): Promise<RunServices & { policyModel: Policy }> {
  const scenario = createScenario(config.scenario);
  const rules = createRules(scenario);
  const policyModel = await Policy.load(nodeModelSource(config.models.policy.model), backend);
  const ctx: GeneratorContext = { policyModel, policyId: config.models.policy.model, backend, engines: new Map() };
  const make = async (role: 'user' | 'judge' | 'evaluator', spec: GeneratorSpec): Promise<TextGenerator | null> => {
    if (spec.kind !== 'rules') return nodeGenerator(role, spec, ctx);
    return role === 'user' ? rules.user : role === 'evaluator' ? rules.evaluator : rules.judge;
  };
  const judge = (await make('judge', config.models.judge))!;
  return {
    policyModel,
    policy: new EnginePolicyService(policyModel, config.preset, config.seed),
    user: await make('user', config.models.user),
    judge,
    hintJudge: config.models.judge.kind === 'rules' ? rules.hintJudge : judge,
    evaluator: await make('evaluator', config.models.evaluator),
  };
}

export const readTextFile = (path: string) => readFile(path, 'utf8');
