/**
 * Services for a headless tool-call run in Node: the policy on the engine and the step judge
 * (PRM) from its spec, rules meaning the offline RulesStepJudge.
 */
import type { Backend } from '../../gpu/backend';
import { Policy } from '../../gpu/policy';
import { RulesStepJudge } from '../../sims/toolcall/index';
import { EnginePolicyService } from '../policy-service';
import type { ToolCallRunConfig } from '../run-config';
import { modelSource } from '../../gpu/source-node';
import { nodeGenerator } from '../services-node';
import type { ToolCallServices } from './loop';

export async function createToolCallNodeServices(config: ToolCallRunConfig, backend: Backend): Promise<ToolCallServices & { policyModel: Policy }> {
  const policyModel = await Policy.load(modelSource(config.models.policy.model), backend);
  if (!policyModel.tokenizer.hasChatTemplate) {
    throw new Error(
      `${config.models.policy.model} has no chat template: the tool-call track needs a chat model that can read tool results ` +
        '(e.g. Qwen/Qwen3-0.6B or HuggingFaceTB/SmolLM2-135M-Instruct)',
    );
  }
  const spec = config.models.judge;
  const judge =
    spec.kind === 'rules'
      ? new RulesStepJudge()
      : await nodeGenerator('judge', spec, { policyModel, policyId: config.models.policy.model, backend, engines: new Map() });
  return { policyModel, policy: new EnginePolicyService(policyModel, config.preset, config.seed), judge };
}
