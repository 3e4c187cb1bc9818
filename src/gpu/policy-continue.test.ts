/**
 * A prompt that continues ids the policy already read and wrote (PromptOptions.continues), on the
 * tiny Qwen3 fixture's real chat template: the ids, then what the template writes after the
 * reply they end in, and nothing rendered again.
 */
import { describe, expect, it } from 'vitest';
import { IM_END_ID, tinyModel } from '../../test/fixtures/tiny-model';
import type { ChatMessage } from '../rl/messages';
import { CpuBackend } from './cpu/backend';
import { PromptContinuationError } from './errors';
import { Policy } from './policy';
import { DirSource } from '../models/source-node';

const TOOLS = [{ type: 'function', function: { name: 'calculator', description: 'Evaluates arithmetic.', parameters: { type: 'object' } } }];
const REPLY = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2 + 3"}}\n</tool_call>';

async function setup() {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const policy = await Policy.load(new DirSource(dir), new CpuBackend());
  const first: ChatMessage[] = [
    { role: 'system', content: 'Use the calculator.' },
    { role: 'user', content: 'What is 2 + 3?' },
  ];
  const prompt = policy.promptIds(first, { tools: TOOLS });
  const next: ChatMessage[] = [...first, { role: 'assistant', content: REPLY }, { role: 'tool', content: '5' }];
  const decode = (ids: readonly number[]) => policy.tokenizer.decode(ids, false);
  return { policy, first, prompt, next, decode };
}

describe('Policy.promptIds with continues', () => {
  it("appends the template's tool turn and generation prompt to the ids, the reply's own <|im_end|> kept once", async () => {
    const { policy, prompt, next, decode } = await setup();
    const reply = [...policy.tokenizer.encode(REPLY, false), IM_END_ID];
    const ids = policy.promptIds(next, { tools: TOOLS, continues: { ids: [...prompt, ...reply], messages: 3 } });
    expect(ids.slice(0, prompt.length + reply.length)).toEqual([...prompt, ...reply]);
    expect(decode(ids.slice(prompt.length + reply.length))).toBe(
      '\n<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    // Rendered whole, the same conversation drops the empty <think> block the first prompt ended in.
    expect(decode(prompt).endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    const whole = policy.promptIds(next, { tools: TOOLS });
    expect(decode(whole)).toContain(`<|im_start|>assistant\n${REPLY}<|im_end|>`);
    expect(whole.length).toBe(ids.length - policy.tokenizer.encode('<think>\n\n</think>\n\n', false).length);
  }, 60_000);

  it('reads the end-of-turn token after a reply cut by its token limit, which did not write it', async () => {
    const { policy, prompt, next, decode } = await setup();
    const cut = policy.tokenizer.encode(REPLY, false);
    const ids = policy.promptIds(next, { tools: TOOLS, continues: { ids: [...prompt, ...cut], messages: 3 } });
    expect(decode(ids.slice(prompt.length + cut.length))).toMatch(/^<\|im_end\|>\n<\|im_start\|>user\n<tool_response>\n5\n/);
  }, 60_000);

  it('refuses what it cannot continue, saying to render the conversation whole', async () => {
    const { policy, first, prompt, next } = await setup();
    const refused = (prompt2: string | ChatMessage[], messages: number) => () =>
      policy.promptIds(prompt2, { tools: TOOLS, continues: { ids: prompt, messages } });
    for (const [p, n] of [
      [next, 2], // ends at the question, not at a reply
      [next, 4], // nothing follows the count
      [next, 0],
      [first, 1],
      ['plain text', 1],
    ] as const) {
      expect(refused(p as string | ChatMessage[], n)).toThrow(PromptContinuationError);
      expect(refused(p as string | ChatMessage[], n)).toThrow(/render the whole conversation instead/);
    }
  }, 60_000);
});
