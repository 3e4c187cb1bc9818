/**
 * Services for a headless tool-call run in Node: the policy on the engine and the step judge
 * (PRM) from its spec, rules meaning the offline RulesStepJudge.
 */
import type { Backend } from '../../gpu/backend';
import { Policy } from '../../gpu/policy';
import { RulesStepJudge } from '../../sims/toolcall/index';
import { EnginePolicyService } from '../policy-service';
import type { ToolCallRunConfig } from '../run-config';
import { modelSource } from '../../models/source-node';
import { nodeGenerator, type LoadProgressFor } from '../services-node';
import { checkToolCallPolicy, type ToolCallServices } from './loop';

export async function createToolCallNodeServices(
  config: ToolCallRunConfig,
  backend: Backend,
  progress?: LoadProgressFor,
): Promise<ToolCallServices & { policyModel: Policy }> {
  const { model, revision, weightFormat } = config.models.policy;
  const policyModel = await Policy.load(modelSource(model, { revision }), backend, { weightFormat, ...progress?.(model) });
  checkToolCallPolicy(model, policyModel.tokenizer.hasChatTemplate);
  const spec = config.models.judge;
  const judge =
    spec.kind === 'rules' ? new RulesStepJudge() : await nodeGenerator('judge', spec, { policyModel, policyId: model, backend, engines: new Map(), progress });
  return { policyModel, policy: new EnginePolicyService(policyModel, config.preset, config.seed, config.sampling.policy.temperature), judge };
}
