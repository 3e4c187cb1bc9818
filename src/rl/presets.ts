import { advantageWeightsShape, type AdvantageWeights } from './advantages';
import { DEFAULT_BATCH_SIZE, ZERO_ADVANTAGE_POLICIES, type ZeroAdvantagePolicy } from './buffer';
import { above, arrayOf, bool, checker, FieldError, int, num, object, oneOf, pair, runChecker, str, type Infer } from '../base/check';
import { PresetError } from './errors';
import { MIN_HINT_CHARS, teacherContextShape } from './hints';
import { hintSelectionShape, LONGEST_HINT, TOPK_HINT_SELECTION, TOPK_HINT_VOTES, usesTopK, type HintSelection } from './topk-hints';
import { MAX_NEW_TOKENS, MAX_TOP_K, MAX_VOTES } from './preset-limits';
import { KL_TYPES, LOSS_AGGREGATIONS, type KlType } from './ppo';
import { DEFAULT_IDLE_TIMEOUT_MS } from './sessions';

/** What the OPD term trains (MethodPreset.advantage.opdTerm). */
export const OPD_TERMS = ['sampled-token', 'topk-distill', 'reverse-kl', 'forward-kl'] as const;
export type OpdTerm = (typeof OPD_TERMS)[number];

/**
 * A KL term's settings: over which of the teacher's tokens it runs (MethodPreset.advantage.reverseKl,
 * src/rl/reverse-kl.ts; MethodPreset.advantage.forwardKl, src/rl/forward-kl.ts).
 */
export type KlSetSettings = Infer<typeof klSetShape>;

/** The OPD terms that are a KL to the teacher's distribution, and the preset key of each one's settings. */
export const KL_TERM_KEYS = { 'reverse-kl': 'reverseKl', 'forward-kl': 'forwardKl' } as const;
export type KlTerm = keyof typeof KL_TERM_KEYS;

/** A preset's KL term: its direction and settings (klTermOf). */
export interface KlTermSettings extends KlSetSettings {
  term: KlTerm;
}

/**
 * Whose hint conditions a turn's teacher (MethodPreset.advantage.hintSource): the judge's, another
 * session's ("shuffled"), or the judge's rewritten for another user of the scenario ("other-child",
 * the storyteller's other child).
 */
export const HINT_SOURCES = ['judge', 'shuffled', 'other-child'] as const;
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
export type TeacherSource = MethodPreset['advantage']['teacher'];

/** 'lora' trains low-rank adapters (what the browser engine does); 'full' trains every weight. */
export type FinetuneMode = MethodPreset['finetune']['mode'];

/**
 * Every number of a run's method. Plain JSON data: a preset is stored in the run file
 * exactly as `JSON.stringify` writes it and read back with parsePreset. Its fields and their
 * meaning are those of presetShape.
 */
export type MethodPreset = Infer<typeof presetShape>;

/** How the tool-call track turns a trajectory into samples (MethodPreset.batch.toolCallSamples). */
export const TOOL_CALL_SAMPLES = ['trajectory', 'step'] as const;
export type ToolCallSamples = (typeof TOOL_CALL_SAMPLES)[number];

/** How a session's last reply is treated (MethodPreset.session.lastTurn). */
export const LAST_TURNS = ['judged', 'unjudged'] as const;
export type LastTurn = (typeof LAST_TURNS)[number];

/** Deep partial of a preset: the shape of overrides. Arrays are replaced, not merged. */
export type PresetOverrides = {
  [K in Exclude<keyof MethodPreset, 'method'>]?: DeepPartial<MethodPreset[K]>;
};
type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Learning rate of the reference's full fine-tune (Adam on all weights, its slime scripts). */
export const LR_FULL = 1e-5;
/**
 * The lab's LoRA learning rate where a preset sets none: the reference's Tinker path
 * (openclaw-tinker/config.py, rank 32). Its slime LoRA scripts (*_lora.sh) keep full
 * fine-tuning's 1e-5 at rank 16 (LORA_SETTINGS).
 */
export const LR_LORA = 1e-4;

/**
 * The reference's two LoRA set-ups, as presets (loraPreset): its slime scripts
 * (openclaw-rl/run_qwen3_4b_openclaw_rl_lora.sh and the Combined one: lr 1e-5, rank 16, alpha
 * 32, every projection) and its Tinker path (openclaw-tinker/config.py: lr 1e-4, rank 32; Tinker
 * sets its own alpha, which the reference does not choose, so the lab's 2 x rank stands in).
 */
export const LORA_SETTINGS = {
  slime: { lr: 1e-5, rank: 16, alpha: 32 },
  tinker: { lr: 1e-4, rank: 32, alpha: 64 },
} as const;
export type LoraSetup = keyof typeof LORA_SETTINGS;

/** Every projection of a llama-family block, by Hugging Face parameter name. */
export const LORA_ALL_PROJECTIONS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

/**
 * m per judge, the signal weights, the upper clip, the hint judge's token limit and the
 * zero-advantage rule, per method (docs/method.md#defaults). The reference's Binary and Combined
 * scripts set --eps-clip-high 0.28; its OPD script sets none, and slime then clips at --eps-clip
 * on both sides (0.2 / 0.2). Its OPD and Combined scripts allow the judge 8192 new tokens
 * (--prm-max-new-tokens), its Binary script 4096. Only its Binary server keeps one zero-advantage
 * sample per session trainable (openclaw-rl/openclaw_api_server.py); its OPD and Combined servers
 * submit every sample they make with the loss mask on ('train-all').
 */
const METHOD_SHAPE: Record<
  MethodName,
  { binaryVotes: number; hintVotes: number; weights: AdvantageWeights; epsHigh: number; maxNewTokens: number; zeroAdvantage: ZeroAdvantagePolicy }
> = {
  binary: { binaryVotes: 3, hintVotes: 0, weights: { binary: 1, opd: 0 }, epsHigh: 0.28, maxNewTokens: 4096, zeroAdvantage: 'at-least-one-per-session' },
  opd: { binaryVotes: 0, hintVotes: 1, weights: { binary: 0, opd: 1 }, epsHigh: 0.2, maxNewTokens: 8192, zeroAdvantage: 'train-all' },
  combined: { binaryVotes: 1, hintVotes: 1, weights: { binary: 1, opd: 1 }, epsHigh: 0.28, maxNewTokens: 8192, zeroAdvantage: 'train-all' },
};

function basePreset(method: MethodName): MethodPreset {
  const shape = METHOD_SHAPE[method];
  return {
    method,
    judge: {
      binaryVotes: shape.binaryVotes,
      hintVotes: shape.hintVotes,
      temperature: 0.6,
      maxNewTokens: shape.maxNewTokens,
      minHintChars: MIN_HINT_CHARS,
    },
    advantage: {
      weights: { ...shape.weights },
      teacher: 'initial',
      teacherContext: { noUserMessage: 'new-user-message', trim: true },
      hintSelection: { ...LONGEST_HINT },
    },
    loss: { epsLow: 0.2, epsHigh: shape.epsHigh, klCoef: 0, aggregation: 'sample-mean' },
    optimizer: { lr: LR_LORA, weightDecay: 0.1, betas: [0.9, 0.98], eps: 1e-8 },
    batch: { size: DEFAULT_BATCH_SIZE, zeroAdvantage: shape.zeroAdvantage },
    finetune: { mode: 'lora', lora: { rank: 16, alpha: 32, targets: [...LORA_ALL_PROJECTIONS] } },
    session: { idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Settings a preset leaves out unless asked (their absence is the default), so its JSON stays as it was. */
const OPTIONAL_SETTINGS = new Set([
  'finetune.recompute',
  'advantage.hintSource',
  'advantage.opdTerm',
  'advantage.reverseKl',
  'advantage.forwardKl',
  'loss.klType',
  'session.lastTurn',
  'batch.toolCallSamples',
]);

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
 * binary: m = 3, weights 1/0, eps 0.2/0.28, judge limit 4096 tokens, one zero-advantage sample
 * per session trained. opd: m = 1 (hint judge), weights 0/1, eps 0.2/0.2, 8192 tokens, every
 * sample trained. combined: m = 1 for both judges, weights 1/1, eps 0.2/0.28, 8192 tokens, every
 * sample trained. All: judge temperature
 * 0.6, kl 0 (low_var_kl), sample-mean aggregation, batch 16, Adam weight decay 0.1, betas (0.9,
 * 0.98), LoRA rank 16 on all projections. Values that follow from others unless overridden: lr
 * is 1e-4 for LoRA (LR_LORA) and 1e-5 for full fine-tuning; LoRA alpha is twice the rank.
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
 * The KL term of the tool-call track: the reference's tool-call script
 * (toolcall-rl/retool_qwen3_4b_prm_rl.sh) keeps an unclamped k3 KL to the reference policy at
 * 0.01 (--kl-loss-type k3), where its personal-agent runs use none.
 */
export const TOOL_CALL_KL_COEF = 0.01;
/** PRM votes per step of the tool-call script (--prm-m 1). */
export const TOOL_CALL_VOTES = 1;

/**
 * `method`'s preset (its votes, weights and teacher, from `overrides`) carrying over the training
 * settings of `from` (optimizer, batch size, fine-tuning, KL coefficient and estimator) and, to a
 * method with a hint judge, the hint selection (with the hint votes top-k selection asked for)
 * and the OPD term: two runs that differ
 * only in the method, as a comparison of the methods needs.
 */
export function presetSwitchedTo(method: MethodName, from: MethodPreset, overrides: PresetOverrides = {}): MethodPreset {
  const preset = makePreset(method, overrides);
  const out: MethodPreset = {
    ...preset,
    optimizer: from.optimizer,
    // The batch size carries over; which zero-advantage samples train is the method's own rule.
    batch: { ...from.batch, zeroAdvantage: preset.batch.zeroAdvantage },
    finetune: from.finetune,
    loss: { ...preset.loss, klCoef: from.loss.klCoef, ...(from.loss.klType ? { klType: from.loss.klType } : {}) },
  };
  const selection = hintSelectionOf(from);
  if (method !== 'binary' && from.method !== 'binary' && usesTopK(selection.rule)) {
    out.advantage = { ...preset.advantage, hintSelection: { ...selection } };
    out.judge = { ...preset.judge, hintVotes: Math.max(preset.judge.hintVotes, from.judge.hintVotes) };
  }
  if (method !== 'binary' && from.advantage.opdTerm) {
    out.advantage = { ...out.advantage, opdTerm: from.advantage.opdTerm };
    for (const key of Object.values(KL_TERM_KEYS)) {
      const settings = from.advantage[key];
      if (settings) out.advantage[key] = { ...settings };
      else delete out.advantage[key];
    }
  }
  return out;
}

/**
 * The tool-call track's preset: the binary method (its PRM votes are evaluative) with the
 * reference's tool-call script's PRM votes (m = 1), KL term (unclamped k3 at 0.01) and samples
 * (one per trajectory, tool outputs masked); `overrides` as for makePreset.
 */
export function toolCallPreset(overrides: PresetOverrides = {}): MethodPreset {
  return makePreset('binary', {
    ...overrides,
    judge: { binaryVotes: TOOL_CALL_VOTES, ...overrides.judge },
    loss: { klCoef: TOOL_CALL_KL_COEF, klType: 'k3', ...overrides.loss },
    batch: { toolCallSamples: 'trajectory', ...overrides.batch },
  });
}

/**
 * `method`'s preset with one of the reference's LoRA set-ups (LORA_SETTINGS): its learning rate,
 * rank and alpha; `overrides` as for makePreset, and they win.
 */
export function loraPreset(method: MethodName, setup: LoraSetup, overrides: PresetOverrides = {}): MethodPreset {
  const { lr, rank, alpha } = LORA_SETTINGS[setup];
  return makePreset(method, {
    ...overrides,
    optimizer: { lr, ...overrides.optimizer },
    finetune: { ...overrides.finetune, lora: { rank, alpha, ...overrides.finetune?.lora } },
  });
}

/**
 * `method`'s preset with the reference's top-k hint selection. Its run
 * (openclaw-combine/run_qwen3_4b_openclaw_topk_select.sh, later than 0d034dd and not pinned
 * here) is Combined (w_rl = w_opd = 1): PRM_M = 3 votes for both judges, up to 3 candidate
 * hints, top-4 sets, the sequence-level winner, teacher minus student clipped to [-1, 1], and
 * its loss (openclaw_topk_select_loss with --distill-subset-mode student): the top-k distillation
 * term (opdTerm "topk-distill") beside the binary advantage. Given 'opd', the same selection
 * without the binary judge, which the reference has no script for. `overrides` as for makePreset.
 */
export function topKSelectPreset(method: Exclude<MethodName, 'binary'>, overrides: PresetOverrides = {}): MethodPreset {
  return makePreset(method, {
    ...overrides,
    judge: { hintVotes: TOPK_HINT_VOTES, ...(method === 'combined' ? { binaryVotes: TOPK_HINT_VOTES } : {}), ...overrides.judge },
    advantage: { opdTerm: 'topk-distill', ...overrides.advantage, hintSelection: { ...TOPK_HINT_SELECTION, ...overrides.advantage?.hintSelection } },
  });
}

const unit = num(0, 1);
const below1 = checker({ type: 'number', minimum: 0, exclusiveMaximum: 1 }, (value, path): number => {
  const n = unit(value, path);
  if (n >= 1) throw new FieldError(path, `must be below 1, got ${n}`);
  return n;
});

const klSetShape = object({
  /**
   * 0: the whole vocabulary (the reverse KL only, for small vocabularies: the teacher's log-probs
   * of every token at every position go into the run file). k >= 1: the teacher's k most likely tokens.
   */
  k: int(0, MAX_TOP_K),
  /** With k >= 1: false renormalises both over the k; true adds one bin for the rest (the reference's --distill-topk loss). */
  tail: bool,
});

/** The one definition of a preset: MethodPreset is its type, parsePreset its reader, docs/schema its JSON Schema. */
export const presetShape = object({
  method: oneOf(...METHODS),
  judge: object({
    /** m for the binary judge; 0 = not used. */
    binaryVotes: int(0, MAX_VOTES),
    /** m for the hint judge; 0 = not used. */
    hintVotes: int(0, MAX_VOTES),
    temperature: num(0, 10),
    maxNewTokens: int(1, MAX_NEW_TOKENS),
    /** A hint must be strictly longer than this many characters. */
    minHintChars: int(0, 100_000),
  }),
  advantage: object(
    {
      weights: advantageWeightsShape,
      teacher: oneOf('initial', 'current'),
      /** How appendHint builds the teacher context. */
      teacherContext: teacherContextShape,
    },
    {
      /**
       * Which accepted hint conditions the teacher, and the clip on A_OPD. Every new preset has it
       * (default: the paper's longest hint, unclipped); a run file written before it existed has
       * none and means that default (read it with hintSelectionOf).
       */
      hintSelection: hintSelectionShape,
      /**
       * Whose hint conditions the teacher: the judge's for this turn ('judge', also when absent),
       * another session's accepted hint ('shuffled', the control of src/rl/hint-shuffle.ts), or the
       * judge's hint as it would read for another child of the storyteller ('other-child', the
       * control of src/sims/scenarios/other-child.ts).
       */
      hintSource: oneOf(...HINT_SOURCES),
      /**
       * What the OPD term trains. 'sampled-token' (the paper's; also when absent): the token the
       * policy wrote, A_t = teacher - old. 'topk-distill' (the reference's top-k select loss):
       * the student's hintSelection.k most likely tokens at every position, each weighted by the
       * old policy renormalised over them (src/rl/topk-distill.ts). 'reverse-kl': KL(pi_theta ||
       * pi_teacher) at every position over the teacher's distribution, as `reverseKl` sets
       * (src/rl/reverse-kl.ts). 'forward-kl': KL(pi_teacher || pi_theta) likewise, as `forwardKl`
       * sets (src/rl/forward-kl.ts): its pull on a token is the teacher's probability of it, not
       * the student's. Read it with opdTermOf.
       */
      opdTerm: oneOf(...OPD_TERMS),
      /** With opdTerm "reverse-kl" (and only then): over which tokens the KL runs. */
      reverseKl: klSetShape,
      /** With opdTerm "forward-kl" (and only then): over which tokens the KL runs (k >= 1). */
      forwardKl: klSetShape,
    },
  ),
  loss: object(
    {
      epsLow: below1,
      epsHigh: num(0, 10),
      klCoef: num(0),
      aggregation: oneOf(...LOSS_AGGREGATIONS),
    },
    {
      /**
       * The KL estimator (slime's --kl-loss-type): "low_var_kl", k3 clamped to [-10, 10], as the
       * reference's personal-agent scripts (also when absent); "k3", unclamped, as its tool-call
       * script. Read it with klTypeOf.
       */
      klType: oneOf(...KL_TYPES),
    },
  ),
  optimizer: object({ lr: above(0), weightDecay: num(0), betas: pair(below1), eps: above(0) }),
  batch: object(
    {
      size: int(1, 1_000_000),
      zeroAdvantage: oneOf(...ZERO_ADVANTAGE_POLICIES),
    },
    {
      /**
       * The tool-call track's samples. 'trajectory' (the reference's, toolCallPreset's default):
       * one sample per trajectory, its tool outputs loss-masked and each step's advantage on its
       * own tokens. 'step': one sample per step. Absent: 'step', as every run logged before the
       * setting trained. The personal-agent track makes one sample per turn either way. Read it
       * with toolCallSamplesOf.
       */
      toolCallSamples: oneOf(...TOOL_CALL_SAMPLES),
    },
  ),
  finetune: object(
    {
      /** 'lora' trains low-rank adapters (what the browser engine does); 'full' trains every weight. */
      mode: oneOf('lora', 'full'),
      lora: object({ rank: int(1, 65_536), alpha: above(0), targets: arrayOf(str(100, 1), 64) }),
    },
    {
      /**
       * The trainer's per-layer recomputation of activations (TrainSettings.recompute): 'layer'
       * trades about one more forward pass for one layer's activations at a time. Absent: 'none'.
       */
      recompute: oneOf('none', 'layer'),
    },
  ),
  session: object(
    {
      /** A session with no request for this long ends, its waiting turn unjudged; 0: never. */
      idleTimeoutMs: num(0),
    },
    {
      /**
       * A session's last reply. 'judged' (the lab's; also when absent): judged against the user's
       * final word, and a session idle for idleTimeoutMs ends. 'unjudged' (the reference's
       * runners, which send nothing after the last turn): never judged and never a sample, and no
       * session times out. Read it with lastTurnOf.
       */
      lastTurn: oneOf(...LAST_TURNS),
    },
  ),
});

/** The settings a preset takes when its OPD term becomes a KL term without its own. */
export const DEFAULT_KL_SET: KlSetSettings = { k: 16, tail: true };

/** Sets the OPD term, adding the KL settings it needs or dropping those it no longer uses. */
export function setOpdTerm(advantage: MethodPreset['advantage'], term: OpdTerm): void {
  advantage.opdTerm = term;
  for (const [kl, key] of Object.entries(KL_TERM_KEYS)) {
    if (term === kl) advantage[key] ??= { ...DEFAULT_KL_SET };
    else delete advantage[key];
  }
}

/** What the OPD term trains; the sampled token for a preset stored without the setting. */
export function opdTermOf(preset: MethodPreset): OpdTerm {
  return preset.advantage.opdTerm ?? 'sampled-token';
}

/** The KL estimator; low_var_kl (clamped k3) for a preset stored without the setting. */
export function klTypeOf(preset: MethodPreset): KlType {
  return preset.loss.klType ?? 'low_var_kl';
}

/** The tool-call track's samples; one per step for a preset stored without the setting (as such runs trained). */
export function toolCallSamplesOf(preset: MethodPreset): ToolCallSamples {
  return preset.batch.toolCallSamples ?? 'step';
}

/** How a session's last reply is treated; 'judged' for a preset stored without the setting. */
export function lastTurnOf(preset: MethodPreset): LastTurn {
  return preset.session.lastTurn ?? 'judged';
}

/**
 * How long a session may stay silent before it ends: never where the preset says 0, or where
 * the last reply goes unjudged (the reference has no timeout).
 */
export function idleTimeoutOf(preset: MethodPreset): number {
  return lastTurnOf(preset) === 'unjudged' || preset.session.idleTimeoutMs === 0 ? Infinity : preset.session.idleTimeoutMs;
}

/**
 * Full fine-tuning at ten times the reference's rate (LR_FULL) or more reads as a LoRA rate
 * carried into a full preset; more than that has no reference script behind it.
 */
export const FULL_LR_WARN = 10 * LR_FULL;

/**
 * A warning for a full fine-tuning preset whose learning rate is a LoRA one (a printed example
 * switched to finetune.mode "full" keeps its LoRA rate), or null.
 */
export function fullFinetuneLrWarning(preset: MethodPreset): string | null {
  if (preset.finetune.mode !== 'full' || preset.optimizer.lr < FULL_LR_WARN) return null;
  return (
    `preset.optimizer.lr is ${preset.optimizer.lr} with finetune.mode "full": that is a LoRA learning rate; ` +
    `the reference fine-tunes every weight at ${LR_FULL} (set optimizer.lr to ${LR_FULL}, or keep it if you mean it)`
  );
}

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
  const source = hintSourceOf(preset);
  if (source !== 'judge') {
    if (preset.method === 'binary') throw new PresetError('advantage.hintSource', `is "${source}" but method "binary" uses no hint; use "opd" or "combined"`);
    // Top-k selection scores the candidates against this turn's reply, which a shuffled hint is
    // not; the other child's is one rewritten hint, not a set of candidates.
    if (usesTopK(hintSelectionOf(preset).rule))
      throw new PresetError('advantage.hintSource', `is "${source}", which works with hintSelection.rule "longest" only; set that rule or hintSource "judge"`);
  }
  checkKlTerm(preset);
  if (opdTermOf(preset) === 'topk-distill') {
    if (preset.method === 'binary')
      throw new PresetError('advantage.opdTerm', 'is "topk-distill" but method "binary" has no OPD term; use "opd" or "combined"');
    if (hintSourceOf(preset) === 'shuffled')
      throw new PresetError(
        'advantage.opdTerm',
        'is "topk-distill", which scores the teacher over this turn\'s own top-k sets; set hintSource "judge" or opdTerm "sampled-token"',
      );
  }
  return preset;
}

/**
 * The KL terms' rules: settings only for the term that needs them, which must have them; the
 * whole vocabulary (k 0) only for the reverse KL (the engine's whole-row op), and a tail only over
 * a top-k set.
 */
function checkKlTerm(preset: MethodPreset): void {
  const term = opdTermOf(preset);
  for (const [kl, key] of Object.entries(KL_TERM_KEYS)) {
    if (term !== kl && preset.advantage[key]) throw new PresetError(`advantage.${key}`, `is set but opdTerm is "${term}"; remove it or set opdTerm "${kl}"`);
  }
  if (term !== 'reverse-kl' && term !== 'forward-kl') return;
  const key = KL_TERM_KEYS[term];
  const r = preset.advantage[key];
  if (preset.method === 'binary') throw new PresetError('advantage.opdTerm', `is "${term}" but method "binary" has no OPD term; use "opd" or "combined"`);
  if (!r)
    throw new PresetError(
      `advantage.${key}`,
      term === 'reverse-kl'
        ? 'is missing; opdTerm "reverse-kl" needs { "k": 0, "tail": false } (the whole vocabulary, small models) or k 1-64 for the teacher\'s top-k'
        : 'is missing; opdTerm "forward-kl" needs k 1-64, the teacher\'s top-k, e.g. { "k": 16, "tail": true }',
    );
  if (r.k === 0 && term === 'forward-kl')
    throw new PresetError('advantage.forwardKl.k', "is 0, but the forward KL runs over the teacher's top-k only; set k 1-64");
  if (r.k === 0 && r.tail)
    throw new PresetError('advantage.reverseKl.tail', 'is true but k is 0 (the whole vocabulary leaves no tail); set tail false or k 1-64');
}

/** The preset's KL term (its direction and settings), or null when its OPD term is not a KL. */
export function klTermOf(preset: MethodPreset): KlTermSettings | null {
  const term = opdTermOf(preset);
  if (term !== 'reverse-kl' && term !== 'forward-kl') return null;
  const settings = preset.advantage[KL_TERM_KEYS[term]];
  return settings ? { term, ...settings } : null;
}

/**
 * Reads a preset from a parsed run file.
 *
 * @throws PresetError naming the first bad field
 */
export function parsePreset(json: unknown): MethodPreset {
  return checkPreset(json);
}
