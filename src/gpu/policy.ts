/**
 * A loaded policy: the model, its tokenizer and the text-level calls the rest of the app uses.
 * Token-level work (generate, score, train) stays available through `model`.
 */
import { hintInFront, quotedRequest, splitHint } from '../rl/hints';
import type { ChatMessage } from '../rl/messages';
import type { Backend } from './backend';
import type { ModelConfig } from './config';
import { EngineLimitError } from './errors';
import { generate, type Generation, type GenerateOptions } from './generate';
import { loadModel, type LoadOptions, type ModelFileHashes } from './load';
import type { LoraAdapter } from './lora';
import type { CausalLM } from './model';
import { overrun, overrunMessage, promptBudget, promptParts, type PromptPart } from './prompt-budget';
import { score, type Scored } from './score';
import type { ModelSource } from './source';
import { Tokenizer } from './tokenizer';

/** How a conversation is rendered besides its messages. */
export interface PromptOptions {
  /**
   * Tools (OpenAI function format) the chat template lists, as Qwen's `<tools>` block; a
   * template without tool support ignores them. Not used for base models or plain text.
   */
  tools?: readonly object[];
}

/**
 * What a base model (no chat template) is shown of the user's later messages. 'latest': the
 * latest one, quoted, in front of the task, as a chat model would read it in the conversation.
 * 'none': every turn answers the task afresh and the user's messages are next states only, read
 * by the judge; the policy must learn what the user wants unasked (the storyteller's child).
 */
export type BaseModelReplies = 'latest' | 'none';

/** The most of a person's latest request a base model is shown: the story keeps its room in the context. */
const REQUEST_CHARS = 200;

export class Policy {
  private constructor(
    readonly model: CausalLM,
    readonly tokenizer: Tokenizer,
    readonly source: ModelSource,
    readonly weightBytes: number,
    /** What the weights were built from, by SHA-256: how a run file names this checkpoint. */
    readonly files: ModelFileHashes,
    readonly replies: BaseModelReplies,
  ) {}

  static async load(source: ModelSource, backend: Backend, options: LoadOptions & { replies?: BaseModelReplies } = {}): Promise<Policy> {
    const loaded = await loadModel(source, backend, options);
    const tokenizer = await Tokenizer.load(source, loaded.config.eosTokenIds, options.onProgress);
    return new Policy(loaded.model, tokenizer, source, loaded.weightBytes, loaded.files, options.replies ?? 'latest');
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  /** The same tokenizer and source over another model of the same config (a fully fine-tuned copy). */
  withModel(model: CausalLM): Policy {
    return new Policy(model, this.tokenizer, this.source, this.weightBytes, this.files, this.replies);
  }

  /** Prompt ids: the chat template for chat models, else the text as the tokenizer encodes it. */
  promptIds(prompt: string | ChatMessage[], options: PromptOptions = {}): number[] {
    const text = this.promptText(prompt, options);
    // A chat template already writes any BOS it wants.
    return typeof prompt === 'string' || !this.tokenizer.hasChatTemplate ? this.tokenizer.encode(text) : this.tokenizer.encode(text, false);
  }

  /**
   * The prompt as text: a chat template's rendering, or for a base model what baseModelText shows
   * it. A chat template renders every part of the conversation, so the parts are counted before
   * it runs; a base model is shown only part of it, so what it is shown counts.
   */
  promptText(prompt: string | ChatMessage[], options: PromptOptions = {}): string {
    if (typeof prompt !== 'string' && this.tokenizer.hasChatTemplate) {
      this.checkLength(promptParts(prompt, options.tools));
      return this.tokenizer.chatPrompt(prompt, options.tools?.length ? { tools: [...options.tools] } : {});
    }
    const text = typeof prompt === 'string' ? prompt : this.baseModelText(prompt);
    this.checkLength([{ field: 'prompt', chars: text.length }]);
    return text;
  }

  /**
   * A base model (no chat template, e.g. TinyStories) continues text, not a conversation: it
   * continues the conversation's first user message, the task (a story beginning), on every
   * turn. What a chat model would read in the conversation goes in front of that text as an
   * instruction, where the demo model learned to read one: the person's latest request, quoted
   * (unless `replies` is 'none'), then any OPD hint appended to it. Earlier requests are left
   * out, so the story keeps its room in a small model's context.
   */
  private baseModelText(prompt: ChatMessage[]): string {
    const users = prompt.filter((m) => m.role === 'user').map((m) => m.content);
    const { text: last, hint } = splitHint(users.at(-1) ?? prompt.at(-1)?.content ?? '');
    const [task, ...later] = [...users.slice(0, -1), last];
    const request = this.replies === 'latest' ? later.at(-1)?.replace(/\s+/g, ' ').trim().slice(0, REQUEST_CHARS) : undefined;
    const instruction = [request ? quotedRequest(request) : '', hint ?? ''].filter(Boolean).join(' ');
    return instruction ? hintInFront(instruction, task) : task;
  }

  /**
   * The completion's ids as they follow the prompt. Encoding the completion alone can differ
   * (sentencepiece adds a leading-space piece, BPE merges across the boundary), so encode the
   * joined text and cut at the prompt when its ids are a prefix.
   */
  completionIds(prompt: string | ChatMessage[], completion: string): number[] {
    const promptIds = this.promptIds(prompt);
    const text = this.promptText(prompt) + completion;
    // The prompt alone passed; the whole text is what is tokenized next.
    this.checkLength([{ field: 'completion', chars: text.length }]);
    const joined = typeof prompt === 'string' || !this.tokenizer.hasChatTemplate ? this.tokenizer.encode(text) : this.tokenizer.encode(text, false);
    const isPrefix = promptIds.every((id, i) => joined[i] === id);
    return isPrefix ? joined.slice(promptIds.length) : this.tokenizer.encode(completion, false);
  }

  /**
   * Refuses text far longer than the model's positions can hold, before it is rendered or
   * tokenized: a 5 MB prompt took the tokenizer more than 60 s and 2 GB before the position check
   * refused its tokens. Every part the template renders counts (prompt-budget.ts).
   *
   * @throws EngineLimitError naming the part that passes the budget, and the budget
   */
  private checkLength(parts: Iterable<PromptPart>): void {
    const positions = this.model.config.maxPositions;
    const over = overrun(parts, promptBudget(positions));
    if (over) throw new EngineLimitError(overrunMessage(over, positions));
  }

  /**
   * `options.tools[i]`: the tools the chat template lists for prompt i (see PromptOptions). Each
   * generation comes with the prompt ids it continued, as a trainer elsewhere needs them.
   */
  async generate(
    prompts: (string | ChatMessage[])[],
    options: Omit<GenerateOptions, 'decode' | 'stopIds'> & { stopIds?: number[]; tools?: (readonly object[] | undefined)[] },
  ): Promise<(Generation & { promptIds: number[] })[]> {
    const { tools, ...rest } = options;
    const ids = prompts.map((p, i) => this.promptIds(p, { tools: tools?.[i] }));
    const gens = await generate(this.model, ids, {
      ...rest,
      stopIds: options.stopIds ?? this.tokenizer.stopIds,
      decode: (tokens) => this.tokenizer.decode(tokens),
    });
    return gens.map((g, i) => ({ ...g, promptIds: ids[i] }));
  }

  /** Log-probs of each completion text after its prompt. */
  async scoreText(items: { prompt: string | ChatMessage[]; completion: string }[], lora?: LoraAdapter): Promise<(Scored & { tokens: number[] })[]> {
    const tokenized = items.map((it) => ({ prompt: this.promptIds(it.prompt), completion: this.completionIds(it.prompt, it.completion) }));
    const scored = await score(this.model, tokenized, { lora });
    return scored.map((s, i) => ({ ...s, tokens: tokenized[i].completion }));
  }
}
