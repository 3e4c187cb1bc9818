/**
 * Services for a headless run in Node: the policy on the engine (CPU, or WebGPU through the
 * `webgpu` package) and the judge, user and evaluator each from its spec. The browser builds
 * the same RunServices from web workers.
 */
import type { Backend } from '../gpu/backend';
import type { LoadProgress } from '../gpu/load';
import { Policy } from '../gpu/policy';
import { modelSource } from '../models/source-node';
import { OpenAICompatibleGenerator } from '../generators/endpoint';
import { EngineGenerator } from '../generators/engine';
import type { TextGenerator } from '../generators/generator';
import { createRules } from '../sims/rules/index';
import { createScenario } from '../sims/scenarios/index';
import { usesToolCallTags } from '../rl/tool-calls';
import { checkWorkspacePolicy } from './agent-turn';
import { EnginePolicyService, type PolicyService } from './policy-service';
import { RemotePolicyService } from './remote-policy';
import { isRemotePolicy, type GeneratorRole, type GeneratorSpec, type RunConfig } from './run-config';
import { PROBLEM_LIMITS } from '../sims/problems/index';
import { readLocalText } from '../models/local-file';
import type { RunServices } from './runloop';

/** A headless run cannot use the key the environment holds for an endpoint as configured. */
export class EndpointKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EndpointKeyError';
  }
}

/**
 * Host names the key variables can name without two hosts sharing one: DNS labels of
 * letters, digits and single hyphens, joined by single dots (IPv4 addresses included).
 */
const NAMEABLE_HOST = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

/**
 * The environment variable that holds the key for `host`: NEXTSTATE_API_KEY_ and the host
 * upper-cased, with "." as "_" and "-" as "__" (api.openai.com -> NEXTSTATE_API_KEY_API_OPENAI_COM,
 * my-vllm.lan -> NEXTSTATE_API_KEY_MY__VLLM_LAN), so that no other host maps to the same name.
 * Null for a host no variable can name (an IPv6 address, an underscore).
 */
export function apiKeyVariable(host: string): string | null {
  if (!NAMEABLE_HOST.test(host)) return null;
  return `NEXTSTATE_API_KEY_${host.toUpperCase().replaceAll('-', '__').replaceAll('.', '_')}`;
}

/** Whether a host name or address is this machine (a key may go there over plain http). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The key for one endpoint, from the variable named for its host only: a config shared with
 * a stranger can name any host, and must not make the run send it a key meant for another.
 * A key goes over plain http only to this machine.
 *
 * @throws EndpointKeyError when the key would go over plain http to another machine, or
 *   when only the old all-hosts NEXTSTATE_API_KEY is set
 */
export function endpointApiKey(baseUrl: string, env: Record<string, string | undefined> = process.env): string | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new EndpointKeyError(`endpoint base URL "${baseUrl}" is not a URL; write it like https://api.openai.com/v1.`);
  }
  const variable = apiKeyVariable(url.hostname);
  const key = variable ? env[variable] : undefined;
  if (!key) {
    if (!env.NEXTSTATE_API_KEY) return undefined;
    throw new EndpointKeyError(
      variable
        ? `NEXTSTATE_API_KEY is no longer sent to every endpoint; set ${variable} for ${url.hostname} instead, and unset NEXTSTATE_API_KEY.`
        : `NEXTSTATE_API_KEY is no longer sent to every endpoint, and no key variable can name ${url.hostname}; name the endpoint by a host name of letters, digits, dots and hyphens, and unset NEXTSTATE_API_KEY.`,
    );
  }
  checkKeyTransport(baseUrl, variable!);
  return key;
}

/**
 * A key goes over plain http only to this machine.
 *
 * @throws EndpointKeyError naming `source` (where the key came from) otherwise
 */
export function checkKeyTransport(baseUrl: string, source: string): void {
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:' && !isLoopback(url.hostname)) {
    throw new EndpointKeyError(`${source} would go to ${url.host} over plain http, readable on the way; use an https base URL, or unset ${source}.`);
  }
}

/** A role asked for the policy's frozen base, which a remote policy does not have here. */
export class RemoteBaseError extends Error {
  override name = 'RemoteBaseError';
  constructor(role: string) {
    super(`models.${role} is "policy", but the policy runs on a server and its weights are not here; use rules, engine or endpoint for models.${role}`);
  }
}

/** What building a model-backed generator needs: the loaded policy and a cache of other engine models. */
export interface GeneratorContext {
  /** null: the policy runs on a server (models.policy.kind "server"). */
  policyModel: Policy | null;
  /** The policy's folder or hub id, for labels. */
  policyId: string;
  backend: Backend;
  /** Engine models loaded so far, by folder or hub id (a model shared by two roles loads once). */
  engines: Map<string, Policy>;
  /** How each model load reports its download and conversion (the CLI's progress lines). */
  progress?: LoadProgressFor;
}

/** The progress hooks for loading one model, by its folder or hub id. */
export type LoadProgressFor = (model: string) => LoadProgress;

/** A judge, user or evaluator from a spec that is not rules (each track has its own rules). */
export async function nodeGenerator(role: string, spec: Exclude<GeneratorSpec, { kind: 'rules' }>, ctx: GeneratorContext): Promise<TextGenerator> {
  switch (spec.kind) {
    case 'policy':
      if (!ctx.policyModel) throw new RemoteBaseError(role);
      return new EngineGenerator(ctx.policyModel, `engine: ${ctx.policyId} (frozen base)`);
    case 'engine': {
      if (!ctx.engines.has(spec.model)) ctx.engines.set(spec.model, await Policy.load(modelSource(spec.model), ctx.backend, ctx.progress?.(spec.model)));
      return new EngineGenerator(ctx.engines.get(spec.model)!);
    }
    case 'endpoint':
      // Keys never live in a run config: Node takes them from the environment, one per host.
      return new OpenAICompatibleGenerator({ baseUrl: spec.baseUrl, model: spec.model, apiKey: endpointApiKey(spec.baseUrl) });
    case 'transformers':
      throw new Error(`models.${role}: transformers.js models run in the lab page; for headless runs use rules, policy, engine or endpoint`);
  }
}

/** The policy, and a local one's loaded model (the serve command renders prompts with it). */
type NodePolicy = { policy: PolicyService; policyModel: Policy | null };

/**
 * The run's policy on the engine here, loaded as its config names it (serve's trainer thread loads
 * its own copy the same way, so both render prompts and start from the same adapter).
 */
export async function loadEnginePolicy(config: RunConfig, backend: Backend, progress?: LoadProgressFor): Promise<EnginePolicyService> {
  const spec = config.models.policy;
  if (isRemotePolicy(spec)) throw new Error('the policy runs on a server (models.policy.kind "server"); there is no model to load here');
  const scenario = createScenario(config.scenario);
  const policyModel = await Policy.load(modelSource(spec.model, { revision: spec.revision }), backend, {
    weightFormat: spec.weightFormat,
    replies: scenario.baseModelReplies,
    ...progress?.(spec.model),
  });
  if (scenario.workspace) {
    const template = policyModel.tokenizer.chatTemplateText;
    checkWorkspacePolicy(spec.model, { hasChatTemplate: template !== null, toolCallTags: usesToolCallTags(template) });
  }
  return new EnginePolicyService(policyModel, config.preset, config.seed, config.sampling.policy.temperature);
}

async function nodePolicy(config: RunConfig, backend: Backend, progress?: LoadProgressFor): Promise<NodePolicy> {
  const spec = config.models.policy;
  if (isRemotePolicy(spec)) {
    // The config's key, else the environment's for that host; over plain http only to this machine.
    const apiKey = spec.apiKey ?? endpointApiKey(spec.url);
    if (spec.apiKey) checkKeyTransport(spec.url, 'models.policy.apiKey');
    return { policy: new RemotePolicyService(spec, { apiKey }), policyModel: null };
  }
  const policy = await loadEnginePolicy(config, backend, progress);
  return { policy, policyModel: policy.policy };
}

/**
 * The policy (loaded here, or a server's: see RemotePolicyService) and each role from its spec.
 * `policyModel` is null for a remote policy.
 */
export async function createNodeServices(config: RunConfig, backend: Backend, progress?: LoadProgressFor): Promise<RunServices & NodePolicy> {
  const scenario = createScenario(config.scenario);
  const rules = createRules(scenario);
  const { policy, policyModel } = await nodePolicy(config, backend, progress);
  const ctx: GeneratorContext = { policyModel, policyId: config.models.policy.model, backend, engines: new Map(), progress };
  const make = async (role: GeneratorRole, spec: GeneratorSpec): Promise<TextGenerator | null> => {
    if (spec.kind !== 'rules') return nodeGenerator(role, spec, ctx);
    return role === 'user' ? rules.user : role === 'evaluator' ? rules.evaluator : rules.judge;
  };
  const judge = (await make('judge', config.models.judge))!;
  return {
    policyModel,
    policy,
    user: await make('user', config.models.user),
    judge,
    hintJudge: config.models.judge.kind === 'rules' ? rules.hintJudge : judge,
    evaluator: await make('evaluator', config.models.evaluator),
  };
}

/** A problem file, through the checked reader with the problem files' cap. */
export const readTextFile = async (path: string) => readLocalText(path, PROBLEM_FILE_LIMIT);

const PROBLEM_FILE_LIMIT = {
  what: 'a problem file',
  maxBytes: PROBLEM_LIMITS.fileBytes,
  hint: 'name a .jsonl or .json file of {"question", "answer"} problems.',
};
