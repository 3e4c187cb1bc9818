/**
 * The provider entry that points OpenClaw at `nextstate serve`, for `~/.openclaw/openclaw.json`.
 * The lab's Connect panel fills it from the watched server; the OpenClaw recipe
 * (openclaw-recipe.ts) writes it for its day, in docs/serve.md and in `npm run test:openclaw`.
 */

export interface OpenClawEntryOptions {
  /** The server's root, as watched: `http://127.0.0.1:30000`. */
  server: string;
  /** The model name the server answers to: the model folder's or hub id's last part, or --served-model-name. */
  modelId: string;
  /** The server's --api-key; OpenClaw wants a value even when the server takes none. */
  apiKey?: string;
  /** The most tokens a reply may have (the server's --max-tokens). */
  maxTokens: number;
  contextWindow?: number;
  /** The provider's name in OpenClaw. */
  provider?: string;
}

/** Qwen3's context length, which OpenClaw budgets its prompt against. */
export const DEFAULT_CONTEXT_WINDOW = 32768;

/** The model name `nextstate serve` answers to without --served-model-name: the last part of --model. */
export function servedModelId(model: string): string {
  return (
    model
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || model
  );
}

/** The JSON to merge into `~/.openclaw/openclaw.json`, two-space indented. */
export function openClawEntry(o: OpenClawEntryOptions): string {
  const provider = o.provider ?? 'nextstate';
  const config = {
    models: {
      providers: {
        [provider]: {
          baseUrl: `${o.server}/v1`,
          apiKey: o.apiKey || 'KEY',
          api: 'openai-completions',
          models: [
            {
              id: o.modelId,
              name: `${o.modelId} (nextstate serve)`,
              reasoning: false,
              input: ['text'],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: o.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
              maxTokens: o.maxTokens,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: `${provider}/${o.modelId}` } } },
  };
  return JSON.stringify(config, null, 2);
}
