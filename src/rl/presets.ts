import type { AdvantageWeights } from './advantages';
import { DEFAULT_BATCH_SIZE, type ZeroAdvantagePolicy } from './buffer';
import { above, arrayOf, bool, FieldError, int, num, object, oneOf, pair, runChecker, str } from './check';
import { PresetError } from './errors';
import { MIN_HINT_CHARS, type AppendHintOptions } from './hints';
import { LONGEST_HINT, TOPK_HINT_SELECTION, TOPK_HINT_VOTES, usesTopK, type HintSelection } from './topk-hints';
import type { LossAggregation } from './ppo';
import { DEFAULT_IDLE_TIMEOUT_MS } from './sessions';

/** Whose hint conditions a turn's teacher (MethodPreset.advantage.hintSource). */
export const HINT_SOURCES = ['judge', 'shuffled'] as const;
export type HintSource = (typeof HINT_SOURCES)[number];

/** The three methods of the paper. */
export const METHODS = ['binary', 'opd', 'combined'] as const;
export type MethodName = (typeof METHODS)[number];

/** The methods' names as the paper and the lab write them. */
export const METHOD_TITLES: Record<MethodName, string> = { binary: 'Binary RL', opd: 'OPD', combined: 'Combined' };

/**
 * Which network scores the hint-conditioned teacher log-probs. 'initial' (reference): the
 * frozen starting policy. 'current': the policy being trained, as the paper's wording reads.
 */
export type TeacherSource = 'initial' | 'current';

/** 'lora' trains low-rank adapters (what the browser engine does); 'full' trains every weight. */
export type FinetuneMode = 'lora' | 'full';

/**
 * Every number of a run's method. Plain JSON data: a preset is stored in the run file
 * exactly as `JSON.stringify` writes it and read back with parsePreset.
 */
export interface MethodPreset {
  method: MethodName;
  judge: {
    /** m for the binary judge; 0 = not used. */
    binaryVotes: number;
    /** m for the hint judge; 0 = not used. */
    hintVotes: number;
    temperature: number;
    maxNewTokens: number;
    /** A hint must be strictly longer than this many characters. */
    minHintChars: number;
  };
  advantage: {
    weights: AdvantageWeights;
    teacher: TeacherSource;
    /** How appendHint builds the teacher context. */
    teacherContext: Required<AppendHintOptions>;
    /**
     * Which accepted hint conditions the teacher, and the clip on A_OPD. Every new preset has it
     * (default: the paper's longest hint, unclipped); a run file written before it existed has
     * none and means that default (read it with hintSelectionOf).
     */
    hintSelection?: HintSelection;
    /**
     * Whose hint conditions the teacher: the judge's for this turn ('judge', also when absent),
     * or another session's accepted hint ('shuffled', the control of src/rl/hint-shuffle.ts).
     */
    hintSource?: HintSource;
  };
  loss: {
    epsLow: number;
    epsHigh: number;
    klCoef: number;
    aggregation: LossAggregation;
  };
  optimizer: {
    lr: number;
    weightDecay: number;
    betas: [number, number];
    eps: number;
  };
  batch: {
    size: number;
    zeroAdvantage: ZeroAdvantagePolicy;
  };
  finetune: {
    mode: FinetuneMode;
    lora: { rank: number; alpha: number; targets: string[] };
    /**
     * The trainer's per-layer recomputation of activations (TrainSettings.recompute): 'layer'
     * trades about one more forward pass for one layer's activations at a time. Absent: 'none'.
     */
    recompute?: 'none' | 'layer';
  };
  session: {
    idleTimeoutMs: number;
  };
}

/** Deep partial of a preset: the shape of overrides. Arrays are replaced, not merged. */
export type PresetOverrides = {
  [K in Exclude<keyof MethodPreset, 'method'>]?: DeepPartial<MethodPreset[K]>;
};
type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Learning rate of the reference's full fine-tune (Adam on all weights). */
export const LR_FULL = 1e-5;
/** Learning rate of the reference's LoRA runs (around 1e-4). */
export const LR_LORA = 1e-4;

/** Every projection of a llama-family block, by Hugging Face parameter name. */
export const LORA_ALL_PROJECTIONS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

/** m per judge and the signal weights, per method (docs/method.md#defaults). */
const METHOD_SHAPE: Record<MethodName, { binaryVotes: number; hintVotes: number; weights: AdvantageWeights }> = {
  binary: { binaryVotes: 3, hintVotes: 0, weights: { binary: 1, opd: 0 } },
  opd: { binaryVotes: 0, hintVotes: 1, weights: { binary: 0, opd: 1 } },
  combined: { binaryVotes: 1, hintVotes: 1, weights: { binary: 1, opd: 1 } },
};

function basePreset(method: MethodName): MethodPreset {
  const shape = METHOD_SHAPE[method];
  return {
    method,
    judge: {
      binaryVotes: shape.binaryVotes,
      hintVotes: shape.hintVotes,
      temperature: 0.6,
      maxNewTokens: 4096,
      minHintChars: MIN_HINT_CHARS,
    },
    advantage: {
      weights: { ...shape.weights },
      teacher: 'initial',
      teacherContext: { noUserMessage: 'new-user-message', trim: true },
      hintSelection: { ...LONGEST_HINT },
    },
    loss: { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation: 'sample-mean' },
    optimizer: { lr: LR_LORA, weightDecay: 0.1, betas: [0.9, 0.98], eps: 1e-8 },
    batch: { size: DEFAULT_BATCH_SIZE, zeroAdvantage: 'at-least-one-per-session' },
    finetune: { mode: 'lora', lora: { rank: 16, alpha: 32, targets: [...LORA_ALL_PROJECTIONS] } },
    session: { idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Settings a preset leaves out unless asked (their absence is the default), so its JSON stays as it was. */
const OPTIONAL_SETTINGS = new Set(['finetune.recompute', 'advantage.hintSource']);

/** Copies `over` onto `base`; a key that base does not have is a typo and is refused. */
function merge(base: Record<string, unknown>, over: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const at = path ? `${path}.${key}` : key;
    if (!Object.hasOwn(base, key) && !OPTIONAL_SETTINGS.has(at)) throw new PresetError(at, 'is not a preset setting');
    if (value === undefined) continue;
    // Arrays and values are taken as given: checkPreset rebuilds every object and array, so
    // the returned preset never shares structure with the caller's overrides.
    out[key] = isPlainObject(base[key]) && isPlainObject(value) ? merge(base[key], value, at) : value;
  }
  return out;
}

function get(obj: unknown, path: string[]): unknown {
  return path.reduce<unknown>((o, k) => (isPlainObject(o) ? o[k] : undefined), obj);
}

/**
 * A method preset with the defaults of docs/method.md#defaults and optional overrides.
 *
 * binary: m = 3, weights 1/0. opd: m = 1 (hint judge), weights 0/1. combined: m = 1 for both
 * judges, weights 1/1. All: judge temperature 0.6, eps 0.2/0.28, kl 0, sample-mean
 * aggregation, batch 16, Adam weight decay 0.1, betas (0.9, 0.98), LoRA rank 16 on all
 * projections. Values that follow from others unless overridden: lr is 1e-4 for LoRA and
 * 1e-5 for full fine-tuning; LoRA alpha is twice the rank.
 *
 * @throws PresetError for an unknown setting or a value out of range
 */
export function makePreset(method: MethodName, overrides: PresetOverrides = {}): MethodPreset {
  if (!Object.hasOwn(METHOD_SHAPE, method)) {
    throw new PresetError('method', `is ${JSON.stringify(method)}; use "binary", "opd" or "combined"`);
  }
  const base = basePreset(method) as unknown as Record<string, unknown>;
  const merged = merge(base, overrides as Record<string, unknown>, '') as unknown as MethodPreset;
  if (get(overrides, ['optimizer', 'lr']) === undefined) {
    merged.optimizer.lr = merged.finetune.mode === 'full' ? LR_FULL : LR_LORA;
  }
  if (get(overrides, ['finetune', 'lora', 'alpha']) === undefined) {
    merged.finetune.lora.alpha = 2 * merged.finetune.lora.rank;
  }
  return checkPreset(merged);
}

/**
 * The KL coefficient of the tool-call track: the reference's tool-call script
 * (toolcall-rl/retool_qwen3_4b_prm_rl.sh) keeps a k3 KL term to the reference policy at 0.01,
 * where its personal-agent runs use none.
 */
export const TOOL_CALL_KL_COEF = 0.01;

/**
 * The tool-call track's preset: the binary method (its PRM votes are evaluative) with the
 * reference's tool-call KL term; `overrides` as for makePreset, a KL coefficient included.
 */
/**
 * `method`'s preset (its votes, weights and teacher, from `overrides`) carrying over the training
 * settings of `from` (optimizer, batch, fine-tuning, KL coefficient) and, to a method with a hint
 * judge, the hint selection (with the hint votes top-k selection asked for): two runs that differ
 * only in the method, as a comparison of the methods needs.
 */
export function presetSwitchedTo(method: MethodName, from: MethodPreset, overrides: PresetOverrides = {}): MethodPreset {
  const preset = makePreset(method, overrides);
  const out: MethodPreset = {
    ...preset,
    optimizer: from.optimizer,
    batch: from.batch,
    finetune: from.finetune,
    loss: { ...preset.loss, klCoef: from.loss.klCoef },
  };
  const selection = hintSelectionOf(from);
  if (method !== 'binary' && from.method !== 'binary' && usesTopK(selection.rule)) {
    out.advantage = { ...preset.advantage, hintSelection: { ...selection } };
    out.judge = { ...preset.judge, hintVotes: Math.max(preset.judge.hintVotes, from.judge.hintVotes) };
  }
  return out;
}

export function toolCallPreset(overrides: PresetOverrides = {}): MethodPreset {
  return makePreset('binary', { ...overrides, loss: { klCoef: TOOL_CALL_KL_COEF, ...overrides.loss } });
}

/**
 * `method`'s preset with the reference's top-k hint selection (its recommended OPD run,
 * run_qwen3_4b_openclaw_topk_select.sh): 3 hint-judge votes, up to 3 candidate hints, top-4
 * sets, the sequence-level winner, A_OPD clipped to [-1, 1]; `overrides` as for makePreset.
 */
export function topKSelectPreset(method: Exclude<MethodName, 'binary'>, overrides: PresetOverrides = {}): MethodPreset {
  return makePreset(method, {
    ...overrides,
    judge: { hintVotes: TOPK_HINT_VOTES, ...overrides.judge },
    advantage: { ...overrides.advantage, hintSelection: { ...TOPK_HINT_SELECTION, ...overrides.advantage?.hintSelection } },
  });
}

const unit = num(0, 1);
const below1 = (value: unknown, path: string): number => {
  const n = unit(value, path);
  if (n >= 1) throw new FieldError(path, `must be below 1, got ${n}`);
  return n;
};

/** The most votes a preset may ask of one judge per turn (binaryVotes, hintVotes). */
export const MAX_VOTES = 64;
/** The largest top-k set a preset may ask for (hintSelection.k): the sets are read back per token. */
export const MAX_TOP_K = 64;
/** The most tokens a config may ask one generation for: past every model's context window. */
export const MAX_NEW_TOKENS = 1_000_000;

const presetShape = object({
  method: oneOf(...METHODS),
  judge: object({
    binaryVotes: int(0, MAX_VOTES),
    hintVotes: int(0, MAX_VOTES),
    temperature: num(0, 10),
    maxNewTokens: int(1, MAX_NEW_TOKENS),
    minHintChars: int(0, 100_000),
  }),
  advantage: object(
    {
      weights: object({ binary: num(), opd: num() }),
      teacher: oneOf('initial', 'current'),
      teacherContext: object({ noUserMessage: oneOf('new-user-message', 'last-message'), trim: bool }),
    },
    {
      hintSelection: object({
        rule: oneOf('longest', 'topk-sequence', 'topk-token'),
        maxCandidates: int(1, MAX_VOTES),
        k: int(1, MAX_TOP_K),
        clip: num(0, 1000),
      }),
      hintSource: oneOf(...HINT_SOURCES),
    },
  ),
  loss: object({
    epsLow: below1,
    epsHigh: num(0, 10),
    klCoef: num(0),
    aggregation: oneOf('sample-mean', 'token-mean'),
  }),
  optimizer: object({ lr: above(0), weightDecay: num(0), betas: pair(below1), eps: above(0) }),
  batch: object({
    size: int(1, 1_000_000),
    zeroAdvantage: oneOf('at-least-one-per-session', 'mask-all', 'train-all'),
  }),
  finetune: object(
    {
      mode: oneOf('lora', 'full'),
      lora: object({ rank: int(1, 65_536), alpha: above(0), targets: arrayOf(str(100, 1), 64) }),
    },
    { recompute: oneOf('none', 'layer') },
  ),
  session: object({ idleTimeoutMs: above(0) }),
});

/** Whose hint conditions the teacher; the judge's for a preset stored without the setting. */
export function hintSourceOf(preset: MethodPreset): HintSource {
  return preset.advantage.hintSource ?? 'judge';
}

/** The preset's hint selection; the paper's longest-hint rule for a preset stored without one. */
export function hintSelectionOf(preset: MethodPreset): HintSelection {
  return preset.advantage.hintSelection ?? LONGEST_HINT;
}

/** Checks the judges the method needs are switched on. */
function checkPreset(value: unknown): MethodPreset {
  const preset: MethodPreset = runChecker(presetShape, value, (e) => new PresetError(e.path, e.problem));
  const { binaryVotes, hintVotes } = preset.judge;
  if (preset.method !== 'opd' && binaryVotes < 1) {
    throw new PresetError('judge.binaryVotes', `is 0 but method "${preset.method}" needs the binary judge; use 1 or more`);
  }
  if (preset.method !== 'binary' && hintVotes < 1) {
    throw new PresetError('judge.hintVotes', `is 0 but method "${preset.method}" needs the hint judge; use 1 or more`);
  }
  if (hintSourceOf(preset) === 'shuffled') {
    if (preset.method === 'binary') throw new PresetError('advantage.hintSource', 'is "shuffled" but method "binary" uses no hint; use "opd" or "combined"');
    // Top-k selection scores the candidates against this turn's reply, which a shuffled hint is not.
    if (usesTopK(hintSelectionOf(preset).rule))
      throw new PresetError('advantage.hintSource', 'is "shuffled", which works with hintSelection.rule "longest" only; set that rule or hintSource "judge"');
  }
  return preset;
}

/**
 * Reads a preset from a parsed run file.
 *
 * @throws PresetError naming the first bad field
 */
export function parsePreset(json: unknown): MethodPreset {
  return checkPreset(json);
}
