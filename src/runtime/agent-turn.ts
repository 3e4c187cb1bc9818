/**
 * The policy's answer to one user message, as an agent gives it. In a plain chat that is one
 * generation. With a workspace (the homework variant) the policy works the way the reference's
 * OpenClaw agent does: each generation's `<tool_call>` blocks (read in the chat template's format
 * by the reader the server uses) run against the workspace, their results come back as `tool`
 * messages, and the policy generates again, until a generation calls no tool: that one is the
 * reply the user sees. Every generation is a main turn of its own, whose next state is what came
 * back after it: the tool result, or the user's next message.
 */
import type { ChatMessage } from '../rl/messages';
import { replyMessage } from '../rl/tool-calls';
import { runWorkspaceCall, type WorkspaceCallResult } from '../sims/workspace/tools';
import type { Workspace } from '../sims/workspace/workspace';
import type { PolicyReply } from './policy-service';

/** A policy whose chat template cannot offer the workspace's tools. */
export class WorkspacePolicyError extends Error {
  override name = 'WorkspacePolicyError';
}

/**
 * The workspace variant needs a policy whose chat template lists tools and asks for
 * `<tool_call>` JSON (the Qwen 2.5/3 and Hermes families); any other model would never call them.
 *
 * @throws WorkspacePolicyError naming the model and models that work
 */
export function checkWorkspacePolicy(model: string, template: { hasChatTemplate: boolean; toolCallTags: boolean }): void {
  if (template.toolCallTags) return;
  throw new WorkspacePolicyError(
    `${model} has ${template.hasChatTemplate ? 'a chat template without <tool_call> tools' : 'no chat template'}: the homework workspace offers its read, ` +
      'write and append tools through the template, so choose a model whose template has them (e.g. Qwen/Qwen3-0.6B), or homework "chat"',
  );
}

/**
 * Generations per user message at most. The last one's calls are not run: the agent is out of
 * rounds, and the user reads what it wrote.
 */
export const MAX_AGENT_ROUNDS = 4;

/** One generation of an agent's answer. */
export interface AgentStep {
  /** The prompt it answered (a copy of the transcript then). */
  messages: ChatMessage[];
  reply: PolicyReply;
  /** 0-based generation within the answer. */
  round: number;
  /** Its tool calls' results, in order; empty for the reply the user sees. */
  results: WorkspaceCallResult[];
}

export interface AgentTurnOptions {
  /** The conversation so far; the answer's assistant and tool messages are appended to it. */
  transcript: ChatMessage[];
  /** null: a plain chat, one generation, nothing parsed. */
  workspace: Workspace | null;
  /** One generation for `messages`; null when the run stopped meanwhile. */
  generate: (messages: ChatMessage[], round: number) => Promise<PolicyReply | null>;
  /** Called after each generation (its calls run), before the next one is asked. */
  onStep?: (step: AgentStep) => Promise<void>;
  maxRounds?: number;
}

/** Runs one answer; returns the reply the user sees, or null when the run stopped. */
export async function agentTurn(o: AgentTurnOptions): Promise<PolicyReply | null> {
  const maxRounds = o.workspace ? (o.maxRounds ?? MAX_AGENT_ROUNDS) : 1;
  // Ends at the latest in round maxRounds - 1, whose calls are not run.
  for (let round = 0; ; round++) {
    const messages = o.transcript.map((m) => ({ ...m }));
    const reply = await o.generate(messages, round);
    if (!reply) return null;
    // The assistant message keeps the text as generated, calls included, so the next prompt
    // renders exactly what the policy wrote (as the tool-call track does).
    o.transcript.push({ role: 'assistant', content: reply.text });
    const calls = o.workspace && round < maxRounds - 1 ? (replyMessage(reply.text, true, 'call').tool_calls ?? []) : [];
    const results: WorkspaceCallResult[] = [];
    for (const call of calls) results.push(await runWorkspaceCall(o.workspace!, call));
    o.transcript.push(...results.map((r): ChatMessage => ({ role: 'tool', content: r.content })));
    await o.onStep?.({ messages, reply, round, results });
    if (results.length === 0) return reply;
  }
}
