/**
 * A loaded policy: the model, its tokenizer and the text-level calls the rest of the app uses.
 * Token-level work (generate, score, train) stays available through `model`.
 */
import { hintInFront, quotedRequest, splitHint } from '../rl/hints';
import type { ChatMessage } from '../rl/messages';
import type { Backend } from './backend';
import type { ModelConfig } from '../models/config';
import { EngineLimitError, PromptContinuationError } from './errors';
import { generate, type Generation, type GenerateOptions } from './generate';
import { loadModel, type LoadOptions, type ModelFileHashes } from './load';
import type { LoraAdapter } from './lora';
import type { CausalLM } from './model';
import { overrun, overrunMessage, promptBudget, promptParts, type PromptPart } from './prompt-budget';
import { score, type Scored } from './score';
import type { ModelSource } from '../models/source';
import { Tokenizer } from '../models/tokenizer';

/** How a conversation is rendered besides its messages. */
export interface PromptOptions {
  /**
   * Tools (OpenAI function format) the chat template lists, as Qwen's `<tools>` block; a
   * template without tool support ignores them. Not used for base models or plain text.
   */
  tools?: readonly object[];
  /**
   * Ids the policy already read and wrote for the conversation's first messages: the prompt
   * continues them (PromptContinuation) instead of rendering the whole conversation again.
   */
  continues?: PromptContinuation;
}

/**
 * The ids a prompt continues: an earlier step's prompt ids and its reply's ids, which hold the
 * conversation's first `messages` messages (the last of them that reply). A tool-call
 * trajectory's next step is sampled this way, as the reference samples it, so that its prompt
 * is exactly the sequence so far plus what the policy then reads.
 */
export interface PromptContinuation {
  ids: readonly number[];
  messages: number;
}

/**
 * Put after the reply's text while the conversation is rendered, to find where the template's
 * own writing after that reply begins. Text no reply holds, and no template trims or escapes.
 */
const REPLY_END = '<<nextstate:end-of-reply>>';

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

  /**
   * Prompt ids: the chat template for chat models, else the text as the tokenizer encodes it;
   * with `options.continues`, those ids and what the template writes after them.
   */
  promptIds(prompt: string | ChatMessage[], options: PromptOptions = {}): number[] {
    if (options.continues) return this.continuedIds(prompt, options.continues, options.tools);
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
   * The ids it continues, then what the chat template writes after their last message (the tool
   * results, the next turn's markers, the generation prompt), tokenized on its own. Rendering
   * the whole conversation again would not give the same ids back: Qwen3's template, thinking
   * off, writes an empty <think> block in the generation prompt and leaves it out of the same
   * reply once a later message follows it.
   *
   * @throws PromptContinuationError when the prompt is text or the model has no chat template,
   *   when `from.messages` does not end at an assistant message before the prompt's last one, or
   *   when the template does not write that reply's text as given; EngineLimitError as promptText
   */
  private continuedIds(prompt: string | ChatMessage[], from: PromptContinuation, tools: readonly object[] | undefined): number[] {
    const n = from.messages;
    const fix = 'render the whole conversation instead (leave out continues; the preset\'s batch.toolCallSamples "step" does)';
    if (typeof prompt === 'string' || !this.tokenizer.hasChatTemplate) {
      throw new PromptContinuationError(`only a chat model's conversation can continue earlier ids; ${fix}`);
    }
    if (!Number.isInteger(n) || n < 1 || n >= prompt.length || prompt[n - 1].role !== 'assistant') {
      throw new PromptContinuationError(
        `continues.messages is ${n}, but it must count the messages through an assistant reply that later messages follow (the prompt has ${prompt.length}); ${fix}`,
      );
    }
    this.checkLength(promptParts(prompt, tools));
    const marked = prompt.map((m, i) => (i === n - 1 ? { ...m, content: m.content + REPLY_END } : m));
    const text = this.tokenizer.chatPrompt(marked, tools?.length ? { tools: [...tools] } : {});
    const at = text.indexOf(REPLY_END);
    if (at === -1 || text.indexOf(REPLY_END, at + 1) !== -1) {
      throw new PromptContinuationError(`${this.source.id}'s chat template does not write an assistant reply's text once, as given; ${fix}`);
    }
    const added = this.tokenizer.encode(text.slice(at + REPLY_END.length), false);
    // The template closes the reply with the end-of-turn token the policy stopped on, which the
    // ids already hold; a reply cut by its token limit gets it here, read rather than written.
    const last = from.ids.at(-1);
    const closed = last !== undefined && added[0] === last && this.tokenizer.stopIds.includes(last);
    return [...from.ids, ...(closed ? added.slice(1) : added)];
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
   * `options.tools[i]` and `options.continues[i]`: how prompt i is rendered (see PromptOptions).
   * Each generation comes with the prompt ids it continued, as a trainer elsewhere needs them.
   */
  async generate(
    prompts: (string | ChatMessage[])[],
    options: Omit<GenerateOptions, 'decode' | 'stopIds'> & {
      stopIds?: number[];
      tools?: (readonly object[] | undefined)[];
      continues?: (PromptContinuation | undefined)[];
    },
  ): Promise<(Generation & { promptIds: number[] })[]> {
    const { tools, continues, ...rest } = options;
    const ids = prompts.map((p, i) => this.promptIds(p, { tools: tools?.[i], continues: continues?.[i] }));
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
