/**
 * The run loop's services in the page: the judge, simulated user and evaluator from their
 * specs. Engine models for those roles run in their own policy workers (never trained, so
 * frozen); transformers.js models in their own generator workers, from the hub or a picked
 * folder; endpoints take their API key from the settings table, never from the run config.
 */
import { hubLocation } from './model-location';
import type { BackendName } from '../../gpu/backend';
import type { RunConfig, GeneratorRole, GeneratorSpec } from '../../runtime/run-config';
import type { RunServices } from '../../runtime/runloop';
import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, GeneratorSource, TextGenerator } from '../../generators/generator';
import { OpenAICompatibleGenerator } from '../../generators/endpoint';
import { WorkerGenerator as GeneratorWorker } from '../../workers/browser/generator-client';
import { pickedRoleFiles, type RoleFiles } from './role-files';
import { createRules } from '../../sims/rules/index';
import { createScenario } from '../../sims/scenarios/index';
import { PolicyClient } from '../../workers/browser/policy-client';
import type { ModelLocation, PolicyEvent } from '../../workers/browser/policy-host';
import type { FileEvent } from './downloads';

/** A frozen model in its own policy worker, as a judge, user or evaluator. */
export class WorkerGenerator implements TextGenerator {
  readonly kind = 'engine' as const;

  constructor(
    private readonly client: PolicyClient,
    readonly label: string,
    readonly source?: GeneratorSource,
  ) {}

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    const [reply] = await this.client.generate(
      [
        {
          messages,
          maxNewTokens: opts.maxNewTokens ?? 512,
          sampling: { temperature: opts.temperature ?? 0.6, topP: opts.topP ?? 1, topK: 0 },
          seed: opts.seed ?? 0,
        },
      ],
      opts.signal,
    );
    return reply.text;
  }
}

export interface ServiceDeps {
  /** Where the policy's own files are, for roles that use a frozen copy of it. */
  policyLocation: ModelLocation;
  backend: BackendName;
  /** The endpoint's API key from settings, if the person gave one. */
  apiKey: (baseUrl: string) => Promise<string | undefined>;
  onProgress: (model: string, e: FileEvent) => void;
  onPolicyEvent?: (model: string, e: PolicyEvent) => void;
  /** Folders picked for roles on transformers.js whose spec says source 'files'. */
  roleFiles?: RoleFiles;
}

export interface BuiltServices {
  services: Omit<RunServices, 'policy'>;
  /** What each role runs on, for the page. */
  labels: Record<GeneratorRole, string>;
  /** What played each role (library and version, device, model), for the run file. */
  sources: Record<string, GeneratorSource>;
  dispose: () => void;
}

export async function buildServices(config: RunConfig, deps: ServiceDeps): Promise<BuiltServices> {
  const scenario = createScenario(config.scenario);
  const rules = createRules(scenario);
  const workers: { terminate(): void }[] = [];
  const made = new Map<string, Promise<TextGenerator>>();
  const make = (role: GeneratorRole, spec: Exclude<GeneratorSpec, { kind: 'rules' }>): Promise<TextGenerator> => {
    // Two roles on the same model share one copy of it.
    const key = JSON.stringify(spec);
    if (!made.has(key)) made.set(key, load(role, spec));
    return made.get(key)!;
  };
  const load = async (role: string, spec: Exclude<GeneratorSpec, { kind: 'rules' }>): Promise<TextGenerator> => {
    switch (spec.kind) {
      case 'policy':
      case 'engine': {
        const name = spec.kind === 'policy' ? `${role}: frozen policy` : `${role}: ${spec.model}`;
        const client = PolicyClient.create((e) => {
          if (e.type === 'progress') deps.onProgress(name, e.progress);
          deps.onPolicyEvent?.(name, e);
        });
        workers.push(client);
        const location: ModelLocation = spec.kind === 'policy' ? deps.policyLocation : hubLocation(spec.model);
        const info = await client.load({
          location,
          backend: deps.backend,
          preset: config.preset,
          seed: config.seed,
          temperature: config.sampling.policy.temperature,
        });
        const source: GeneratorSource = {
          kind: 'engine',
          library: 'the lab’s engine',
          device: deps.backend,
          model: spec.kind === 'policy' ? `${info.label} (frozen policy)` : spec.model,
        };
        return new WorkerGenerator(
          client,
          spec.kind === 'policy' ? `engine: ${info.label} (frozen copy of the policy)` : `engine: ${info.label} (frozen)`,
          source,
        );
      }
      case 'transformers': {
        const fromFiles = spec.source === 'files';
        const files = fromFiles ? deps.roleFiles?.[role as keyof RoleFiles] : undefined;
        if (fromFiles && !files?.length) throw new Error(`The ${role}’s model came from a picked folder: pick the folder of ${spec.model} again.`);
        const gen = await GeneratorWorker.load(
          { kind: 'transformers', model: spec.model, device: spec.device, dtype: spec.dtype, ...(files && { files: pickedRoleFiles(files) }) },
          (p) => deps.onProgress(`${role}: ${spec.model}`, { file: p.file, loaded: p.loaded, total: p.total, fromCache: p.fromCache ?? false }),
          role,
        );
        workers.push(gen);
        return gen;
      }
      case 'endpoint':
        return new OpenAICompatibleGenerator({ baseUrl: spec.baseUrl, model: spec.model, apiKey: await deps.apiKey(spec.baseUrl) });
    }
  };
  const pick = async (role: GeneratorRole): Promise<TextGenerator | null> => {
    const spec = config.models[role];
    if (spec.kind !== 'rules') return make(role, spec);
    return role === 'user' ? rules.user : role === 'evaluator' ? rules.evaluator : rules.judge;
  };
  const sourceOf = (role: GeneratorRole, g: TextGenerator): GeneratorSource => {
    if (g.source) return g.source;
    const spec = config.models[role];
    return { kind: g.kind, ...('model' in spec && { model: spec.model }), ...(spec.kind === 'endpoint' && { library: `endpoint ${spec.baseUrl}` }) };
  };
  const dispose = () => workers.forEach((w) => w.terminate());
  try {
    const talk = scenario.persona === null;
    const judge = (await pick('judge'))!;
    const user = talk ? null : await pick('user');
    const evaluator = talk ? null : await pick('evaluator');
    return {
      services: { user, judge, hintJudge: config.models.judge.kind === 'rules' ? rules.hintJudge : judge, evaluator },
      labels: {
        user: talk ? 'you' : (user?.label ?? 'none'),
        judge: judge.label,
        evaluator: evaluator?.label ?? 'none (no score for this scenario)',
      },
      sources: {
        judge: sourceOf('judge', judge),
        ...(user && { user: sourceOf('user', user) }),
        ...(evaluator && { evaluator: sourceOf('evaluator', evaluator) }),
      },
      dispose,
    };
  } catch (e) {
    dispose();
    throw e;
  }
}

/** Where an endpoint's key lives in the settings table (never in a run config or export). */
export const apiKeySetting = (baseUrl: string) => `endpoint-key:${baseUrl.trim().replace(/\/+$/, '')}`;
