/**
 * Chat templates rendered within a budget. A chat template is a program that comes with the model
 * (tokenizer_config.json, chat_template.jinja), and Jinja has loops: a 200-byte template looping
 * 100 M times took more than 4 GB in 60 s, nested loops of 1e10 pin a core, and rendering is
 * synchronous, so nothing outside it can stop it. This renders with the interpreter transformers.js
 * uses (@huggingface/jinja, the same parser and the same context, so the text is the same), but
 * counts its steps as it goes: every node evaluated and every loop iteration, a clock checked
 * every STEP_CHECK steps, and the length of every string and list made. Past any of its limits it
 * stops with one line. The CLI, the page's policy worker and the transformers.js generator render
 * every chat template here.
 */
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { EngineError } from './errors';

/** What one rendering may cost; real templates render a conversation in a few thousand steps. */
export const TEMPLATE_LIMITS = {
  /** Characters of the template itself: real ones are under 30,000. */
  templateChars: 1_000_000,
  /** Nodes evaluated plus loop iterations. */
  steps: 1_000_000,
  /** Wall-clock time, checked every STEP_CHECK steps. */
  ms: 10_000,
  /** Characters of any one string the template makes, the rendered prompt included. */
  outputChars: 16_000_000,
  /** Characters of every string the template makes, together. */
  producedChars: 256_000_000,
  /** Entries of any one list (range() included, refused before it is built). */
  items: 1_000_000,
};
export type TemplateLimits = typeof TEMPLATE_LIMITS;

const STEP_CHECK = 1024;

const formatCount = (n: number) => n.toLocaleString('en-US');

/** The model's chat template cannot be rendered: too costly, malformed, or it raised an error. */
export class ChatTemplateError extends EngineError {}

/** What the interpreter's values look like from outside (its classes are not exported). */
interface RuntimeValue {
  type: string;
  value: unknown;
}
type Evaluate = (statement: unknown, environment: unknown) => RuntimeValue;
interface Hooks {
  evaluate: Evaluate;
  evaluateBlock: Evaluate;
}

/** Counts what a rendering spends; throws ChatTemplateError past a limit. */
class Budget {
  private steps = 0;
  private produced = 0;
  private readonly deadline: number;

  constructor(private readonly limits: TemplateLimits) {
    this.deadline = Date.now() + limits.ms;
  }

  spend(steps: number): void {
    const before = this.steps;
    this.steps += steps;
    if (this.steps > this.limits.steps) throw over(`took more than ${formatCount(this.limits.steps)} steps`);
    if (Math.floor(this.steps / STEP_CHECK) !== Math.floor(before / STEP_CHECK) && Date.now() > this.deadline) {
      throw over(`ran longer than ${this.limits.ms / 1000} s`);
    }
  }

  made(v: RuntimeValue): RuntimeValue {
    if (typeof v?.value === 'string') {
      const n = v.value.length;
      if (n > this.limits.outputChars) throw over(`made a string of more than ${formatCount(this.limits.outputChars)} characters`);
      this.produced += n;
      if (this.produced > this.limits.producedChars) throw over(`made more than ${formatCount(this.limits.producedChars)} characters in all`);
    } else if (Array.isArray(v?.value)) {
      this.list(v.value.length);
    }
    return v;
  }

  list(n: number): void {
    if (n > this.limits.items) throw over(`made a list of more than ${formatCount(this.limits.items)} entries`);
  }
}

function over(what: string): ChatTemplateError {
  return new ChatTemplateError(
    `the chat template ${what}, far more than rendering a conversation takes; it is not a usable chat template. ` +
      'Use the model\u2019s original tokenizer_config.json (or chat_template.jinja), or give plain text prompts.',
  );
}

/** Jinja's range(), refused before its list is built when it would be too long, and paid for per entry. */
function boundedRange(budget: Budget, limits: TemplateLimits) {
  return (start: number, stop?: number, step = 1): number[] => {
    const [a, b] = stop === undefined ? [0, start] : [start, stop];
    if (step === 0) throw new Error('range() step must not be zero');
    const n = Math.max(0, Math.ceil((b - a) / step));
    if (!Number.isFinite(n) || n > limits.items) budget.list(Infinity);
    budget.spend(n);
    return Array.from({ length: n }, (_, i) => a + i * step);
  };
}

/** The library's own strftime_now (not exported), reached through a template that calls it. */
const strftimeTemplate = new Template('{{ strftime_now(format) }}');
const strftimeNow = (format: string) => strftimeTemplate.render({ format });

/** A parsed chat template. */
export class ChatTemplate {
  private constructor(private readonly template: Template) {}

  /** @throws ChatTemplateError when the text is too long or not a Jinja template */
  static compile(text: string, limits: TemplateLimits = TEMPLATE_LIMITS): ChatTemplate {
    if (text.length > limits.templateChars) {
      throw new ChatTemplateError(
        `the chat template is ${formatCount(text.length)} characters, more than the ${formatCount(limits.templateChars)} a chat template may be; use the model\u2019s original tokenizer_config.json.`,
      );
    }
    try {
      return new ChatTemplate(new Template(text));
    } catch (e) {
      throw new ChatTemplateError(`the chat template is not a valid Jinja template (${firstLine(e)}); use the model\u2019s original tokenizer_config.json.`);
    }
  }

  /**
   * The template rendered with `context` (messages, add_generation_prompt, tools, special tokens).
   *
   * @throws ChatTemplateError past a limit, or naming what the template raised
   */
  render(context: Record<string, unknown>, limits: TemplateLimits = TEMPLATE_LIMITS): string {
    const budget = new Budget(limits);
    const env = new Environment();
    // The globals Template.render sets, with range() bounded.
    const globals: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      raise_exception: (message: unknown) => {
        throw new RaisedError(String(message));
      },
      range: boundedRange(budget, limits),
      strftime_now: strftimeNow,
      True: true,
      False: false,
      None: null,
    };
    for (const [key, value] of Object.entries({ ...globals, ...context })) env.set(key, value);
    const interpreter = new Interpreter(env);
    // Instance properties shadow the prototype's, and the interpreter calls these through `this`,
    // so every node and every loop iteration passes the budget.
    const hooks = interpreter as unknown as Hooks;
    const { evaluate, evaluateBlock } = Interpreter.prototype as unknown as Hooks;
    hooks.evaluate = (statement, environment) => {
      budget.spend(1);
      return budget.made(evaluate.call(interpreter, statement, environment));
    };
    hooks.evaluateBlock = (statements, environment) => {
      budget.spend(1);
      return budget.made(evaluateBlock.call(interpreter, statements, environment));
    };
    try {
      const out = interpreter.run(this.template.parsed) as RuntimeValue;
      return String(out.value);
    } catch (e) {
      if (e instanceof ChatTemplateError) throw e;
      // A string or list past what the engine can hold, or a macro that calls itself without end.
      if (e instanceof RangeError) throw over(`failed with "${firstLine(e)}"`);
      if (e instanceof RaisedError) throw new ChatTemplateError(`the chat template refused this conversation: ${e.message}`);
      throw new ChatTemplateError(`the chat template failed (${firstLine(e)}); use the model\u2019s original tokenizer_config.json.`);
    }
  }
}

/** What the template raised with raise_exception: its own words about the conversation. */
class RaisedError extends Error {}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** The tokenizer fields rendering needs (a transformers.js PreTrainedTokenizer has them). */
export interface TemplateTokenizer {
  config: Record<string, unknown>;
  get_chat_template(options: { chat_template?: string | null; tools?: object[] | null }): unknown;
}

/** The special tokens transformers.js puts in a template's context: strings, or AddedToken objects' content. */
const SPECIAL_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

/** A special token a tokenizer config names, as a string or an AddedToken object; undefined when unnamed. */
export function configTokenText(config: Record<string, unknown>, key: string): string | undefined {
  const v = Object.hasOwn(config, key) ? config[key] : undefined;
  const text = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? (v as { content?: unknown }).content : undefined;
  return typeof text === 'string' && text ? text : undefined;
}

function specialTokens(config: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of SPECIAL_TOKENS) {
    const text = configTokenText(config, key);
    if (text) out[key] = text;
  }
  return out;
}

const compiled = new WeakMap<TemplateTokenizer, Map<string, ChatTemplate>>();

export interface ChatRenderOptions {
  addGenerationPrompt: boolean;
  tools?: object[] | null;
  /** Further context the template reads (Qwen3's enable_thinking). */
  extra?: Record<string, unknown>;
  limits?: TemplateLimits;
}

/**
 * A conversation through the tokenizer's chat template, in the context transformers.js'
 * apply_chat_template gives it, within the budget.
 *
 * @throws ChatTemplateError
 */
export function renderChat(tok: TemplateTokenizer, messages: readonly object[], o: ChatRenderOptions): string {
  let text: unknown;
  try {
    text = tok.get_chat_template({ chat_template: null, tools: o.tools ?? null });
  } catch (e) {
    throw new ChatTemplateError(`the chat template cannot be chosen (${firstLine(e)}); name a default template in tokenizer_config.json.`);
  }
  if (typeof text !== 'string') throw new ChatTemplateError('the chat template is not a string; use the model\u2019s original tokenizer_config.json.');
  let cache = compiled.get(tok);
  if (!cache) compiled.set(tok, (cache = new Map()));
  let template = cache.get(text);
  if (!template) cache.set(text, (template = ChatTemplate.compile(text, o.limits)));
  return template.render(
    {
      messages,
      add_generation_prompt: o.addGenerationPrompt,
      tools: o.tools ?? null,
      documents: null,
      ...specialTokens(tok.config),
      ...o.extra,
    },
    o.limits,
  );
}
