/**
 * Tokenizer and chat template, built from the same ModelSource as the weights so that a folder,
 * picked files and the hub all work offline once the files are here. The tokenizer is
 * @huggingface/tokenizers, the library transformers.js wraps: its PreTrainedTokenizer (and every
 * subclass a causal LM names) encodes and decodes through it unchanged, so the ids are the same
 * without the inference runtime, which the installed `nextstate` command does not carry.
 */
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import type { ChatMessage } from '../rl/messages';
import { byteTokenText } from '../rl/readable-text';
import { configTokenText, renderChat } from './chat-template';
import { chatTemplates, type ChatTemplates } from './chat-template-choice';
import { ModelSourceError } from './errors';
import { readJson, readText, type FileProgress, type ModelSource } from './source';

/** How a tokenizer's pieces hold bytes: which of the two byte decoders its tokenizer.json names. */
type ByteScheme = 'byte-fallback' | 'byte-level' | null;

function byteScheme(decoder: unknown): ByteScheme {
  const d = decoder as { type?: string; decoders?: unknown[] } | null;
  if (!d) return null;
  if (d.type === 'ByteFallback') return 'byte-fallback';
  if (d.type === 'ByteLevel') return 'byte-level';
  for (const inner of d.decoders ?? []) {
    const s = byteScheme(inner);
    if (s) return s;
  }
  return null;
}

/** GPT-2's map from a byte-level piece's characters back to bytes (its bytes_to_unicode, inverted). */
const BYTE_LEVEL: ReadonlyMap<string, number> = (() => {
  const direct = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const map = new Map<string, number>();
  let shifted = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCharCode(direct(b) ? b : 256 + shifted++), b);
  return map;
})();

const BYTE_PIECE = /^<0x([0-9A-F]{2})>$/;

export class Tokenizer {
  private constructor(
    private readonly tok: HfTokenizer,
    private readonly templates: ChatTemplates,
    /** Ids that end a generation: the config's EOS plus the template's end-of-turn token. */
    readonly stopIds: number[],
    private readonly bytes: ByteScheme,
  ) {}

  static async load(source: ModelSource, configEos: number[] = [], onProgress?: (p: FileProgress) => void): Promise<Tokenizer> {
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
      if (!(await source.has(f))) {
        throw new ModelSourceError(`${source.id} has no ${f}; a model folder needs tokenizer.json and tokenizer_config.json.`);
      }
    }
    const json = await readJson(source, 'tokenizer.json', onProgress);
    const config = (await readJson(source, 'tokenizer_config.json', onProgress)) as Record<string, unknown>;
    if (config.chat_template == null && (await source.has('chat_template.jinja'))) {
      config.chat_template = await readText(source, 'chat_template.jinja', onProgress);
    }
    let tok: HfTokenizer;
    let templates: ChatTemplates;
    try {
      tok = new HfTokenizer(json as object, config);
      templates = chatTemplates(config);
    } catch (e) {
      throw new ModelSourceError(
        `${source.id}: tokenizer.json and tokenizer_config.json do not make a tokenizer (${(e as Error).message}); the files are damaged or not a tokenizer's.`,
      );
    }
    const stop = new Set(configEos);
    for (const t of [configTokenText(config, 'eos_token'), '<|im_end|>', '<|eot_id|>', '<|end_of_text|>']) {
      const id = t === undefined ? undefined : tok.token_to_id(t);
      if (id !== undefined) stop.add(id);
    }
    return new Tokenizer(tok, templates, [...stop], byteScheme((json as { decoder?: unknown }).decoder));
  }

  get hasChatTemplate(): boolean {
    return Boolean(this.templates.chat_template);
  }

  /** The chat template's source (every named template, for a config that has several), or null. */
  get chatTemplateText(): string | null {
    const t = this.templates.chat_template;
    return typeof t === 'string' ? t : t ? JSON.stringify(t) : null;
  }

  get vocabSize(): number {
    return this.tok.get_vocab().size;
  }

  /** Token ids as the model's tokenizer gives them by default (BOS where its config adds one). */
  encode(text: string, addSpecialTokens = true): number[] {
    return this.tok.encode(text, { add_special_tokens: addSpecialTokens }).ids;
  }

  decode(ids: ArrayLike<number>, skipSpecialTokens = true): string {
    return this.tok.decode(Array.from(ids), { skip_special_tokens: skipSpecialTokens });
  }

  /**
   * Each token as a record keeps it (`tokenTexts`): decoded alone, except a byte token and a token
   * that holds part of a character, which alone would decode to "�": those are kept as their bytes
   * in byte notation (`<0xE2>`), so that readers decode them across tokens as the tokenizer does
   * (src/rl/readable-text.ts).
   */
  tokenTexts(ids: readonly number[]): string[] {
    return ids.map((id) => {
      const alone = this.decode([id], false);
      if (this.bytes === 'byte-fallback') return BYTE_PIECE.test(this.pieceOf(id)) ? this.pieceOf(id) : alone;
      if (this.bytes === null || !alone.includes('\uFFFD')) return alone;
      const bytes = [...this.pieceOf(id)].map((c) => BYTE_LEVEL.get(c));
      return bytes.every((b) => b !== undefined) ? byteTokenText(bytes as number[]) : alone;
    });
  }

  private pieceOf(id: number): string {
    return this.tok.id_to_token(id) ?? '';
  }

  /**
   * The chat template rendered as text, within its budget (chat-template.ts); Qwen3 gets
   * enable_thinking=false unless asked.
   */
  chatPrompt(messages: ChatMessage[], options: { addGenerationPrompt?: boolean; enableThinking?: boolean; tools?: object[] } = {}): string {
    if (!this.hasChatTemplate) {
      throw new ModelSourceError('this model has no chat template; it is a base model, so give it plain text prompts.');
    }
    return renderChat(this.templates, messages, {
      addGenerationPrompt: options.addGenerationPrompt ?? true,
      tools: options.tools,
      extra: { enable_thinking: options.enableThinking ?? false },
    });
  }
}
