import type { ChatMessage } from '../rl/messages';
import { object, oneOf, str, type Infer } from '../base/check';

/**
 * Where a generator's text comes from. The run loop treats every kind alike; the kind is shown to
 * the person so that a rule-based simulator is never mistaken for a model.
 */
export const GENERATOR_KINDS = ['engine', 'transformers', 'endpoint', 'rules'] as const;
export type GeneratorKind = (typeof GENERATOR_KINDS)[number];

export interface GenerateOptions {
  temperature?: number;
  topP?: number;
  maxNewTokens?: number;
  /** Backends that cannot seed their sampler ignore it. */
  seed?: number;
  /**
   * Generation ends at the first of these strings, which the reply does not include. Honoured by
   * transformers.js models and endpoints; others ignore it.
   */
  stop?: string[];
  signal?: AbortSignal;
}

/** What played a role, for the run file: the library and its version, the device, the model (a run config's roleSources). */
export const generatorSourceChecker = object(
  { kind: oneOf(...GENERATOR_KINDS) },
  {
    /** e.g. "@huggingface/transformers 4.3.2". */
    library: str(256),
    /** e.g. "webgpu", "wasm", "cpu". */
    device: str(64),
    /** Hub id, folder name or endpoint model. */
    model: str(1024),
    /** Weight variant, e.g. "q4", "fp32". */
    dtype: str(64),
  },
);
export type GeneratorSource = Infer<typeof generatorSourceChecker>;

/** Anything that answers a chat: the policy engine, a frozen judge, a simulated user. */
export interface TextGenerator {
  readonly label: string;
  readonly kind: GeneratorKind;
  /** What plays the role, where the generator knows it. */
  readonly source?: GeneratorSource;
  generate(messages: ChatMessage[], opts?: GenerateOptions): Promise<string>;
}
