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

export async function createNodeServices(config: RunConfig, backend: Backend): Promise<RunServices & { policyModel: Policy }> {
  const scenario = createScenario(config.scenario);
  const rules = createRules(scenario);
  const policyModel = await Policy.load(nodeModelSource(config.models.policy.model), backend);
  const engines = new Map<string, Policy>();
  const make = async (role: 'user' | 'judge' | 'evaluator', spec: GeneratorSpec): Promise<TextGenerator | null> => {
    switch (spec.kind) {
      case 'rules':
        return role === 'user' ? rules.user : role === 'evaluator' ? rules.evaluator : rules.judge;
      case 'policy':
        return new EngineGenerator(policyModel, `engine: ${config.models.policy.model} (frozen base)`);
      case 'engine': {
        if (!engines.has(spec.model)) engines.set(spec.model, await Policy.load(nodeModelSource(spec.model), backend));
        return new EngineGenerator(engines.get(spec.model)!);
      }
      case 'endpoint':
        // Keys never live in a run config: Node takes them from the environment.
        return new OpenAICompatibleGenerator({ baseUrl: spec.baseUrl, model: spec.model, apiKey: process.env.NEXTSTATE_API_KEY });
      case 'transformers':
        throw new Error(`models.${role}: transformers.js models run in the lab page; for headless runs use rules, policy, engine or endpoint`);
    }
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
