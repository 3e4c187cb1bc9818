/**
 * Which chat template a tokenizer config gives a conversation, chosen as transformers.js'
 * PreTrainedTokenizer chooses it (its constructor and get_chat_template), for the tokenizer the
 * engine builds without that library: the same template, so the same prompt text.
 */
import type { TemplateTokenizer } from './chat-template';

/** A config's one template, or its named ones (a list of {name, template} in the file). */
type Templates = string | Readonly<Record<string, string>> | null;

export interface ChatTemplates extends TemplateTokenizer {
  readonly chat_template: Templates;
}

function namedTemplates(value: unknown): Templates {
  if (!Array.isArray(value)) return (value as Templates | undefined) ?? null;
  const named: Record<string, string> = Object.create(null);
  for (const { name, template } of value as { name?: unknown; template?: unknown }[]) {
    if (typeof name !== 'string' || typeof template !== 'string') {
      throw new Error('Chat template must be a list of objects with "name" and "template" properties');
    }
    named[name] = template;
  }
  return named;
}

/** @throws Error when the config's chat_template is a list that is not of named templates */
export function chatTemplates(config: Record<string, unknown>): ChatTemplates {
  const chat_template = namedTemplates(config.chat_template);
  return {
    config,
    chat_template,
    get_chat_template({ tools = null } = {}) {
      if (chat_template === null || typeof chat_template === 'string') {
        if (chat_template) return chat_template;
        throw new Error('this tokenizer has no chat template');
      }
      if (tools !== null && 'tool_use' in chat_template) return chat_template.tool_use;
      if ('default' in chat_template) return chat_template.default;
      throw new Error(`this model has several chat templates and none is named default: ${Object.keys(chat_template).sort().join(', ')}`);
    },
  };
}
