/**
 * docs/method.md's departures table against the presets: every preset field whose default differs
 * from the reference's value (Gen-Verse/OpenClaw-RL at 0d034dd, its slime scripts) must be named
 * in the table's first column. A default changed, or a field added, without a row fails here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hintSourceOf, klTypeOf, lastTurnOf, makePreset, METHODS, opdTermOf, toolCallPreset, type MethodName, type MethodPreset } from '../../src/rl/presets';
import { ROOT } from './code-references';

type Values = Record<string, unknown>;

/** The reference's value of every preset field for the personal-agent methods (openclaw-{rl,opd,combine}/run_qwen3_4b_*.sh). */
const REFERENCE_COMMON: Values = {
  'judge.temperature': 0.6, // --prm-temperature
  'judge.minHintChars': 10, // _select_best_hint: len(hint.strip()) > 10
  'advantage.teacher': 'initial', // the teacher is the frozen initial model
  'advantage.teacherContext.noUserMessage': 'last-message', // _append_hint_to_messages
  'advantage.teacherContext.trim': true, // the hint is stripped
  'advantage.hintSelection.rule': 'longest', // _select_best_hint: the longest
  'advantage.hintSelection.clip': 0, // A_OPD unclipped
  // Unused by the longest rule; the values of the later top-k select run.
  'advantage.hintSelection.maxCandidates': 3,
  'advantage.hintSelection.k': 4,
  'advantage.hintSource': 'judge',
  'advantage.opdTerm': 'sampled-token',
  'loss.epsLow': 0.2, // --eps-clip
  'loss.klCoef': 0, // --kl-loss-coef 0.0
  'loss.klType': 'low_var_kl', // --kl-loss-type
  'loss.aggregation': 'sample-mean', // slime's sum_of_sample_mean
  'optimizer.lr': 1e-5, // --lr
  'optimizer.weightDecay': 0.1,
  'optimizer.betas': [0.9, 0.98],
  'optimizer.eps': 1e-8, // Megatron's --adam-eps default
  'batch.size': 16, // --rollout-batch-size 16, --n-samples-per-prompt 1
  'finetune.mode': 'full',
  // The slime LoRA scripts (run_qwen3_4b_openclaw_rl_lora.sh, ..._combine_lora.sh).
  'finetune.lora.rank': 16,
  'finetune.lora.alpha': 32,
  'finetune.lora.targets': ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  'finetune.recompute': 'megatron',
  'session.idleTimeoutMs': Infinity, // no timeout
  'session.lastTurn': 'unjudged',
};

const REFERENCE_METHOD: Record<MethodName, Values> = {
  binary: {
    'method': 'binary',
    'judge.binaryVotes': 3, // PRM_M=3
    'judge.hintVotes': 0,
    'judge.maxNewTokens': 4096,
    'advantage.weights.binary': 1,
    'advantage.weights.opd': 0,
    'loss.epsHigh': 0.28,
    'batch.zeroAdvantage': 'at-least-one-per-session', // openclaw_api_server.py's guarantee
  },
  opd: {
    'method': 'opd',
    'judge.binaryVotes': 0,
    'judge.hintVotes': 1, // PRM_M=1
    'judge.maxNewTokens': 8192,
    'advantage.weights.binary': 0,
    'advantage.weights.opd': 1,
    'loss.epsHigh': 0.2, // no --eps-clip-high
    'batch.zeroAdvantage': 'train-all', // every submitted sample has loss_mask 1
  },
  combined: {
    'method': 'combined',
    'judge.binaryVotes': 1, // PRM_M=1
    'judge.hintVotes': 1,
    'judge.maxNewTokens': 8192,
    'advantage.weights.binary': 1,
    'advantage.weights.opd': 1,
    'loss.epsHigh': 0.28,
    'batch.zeroAdvantage': 'train-all',
  },
};

/** The tool-call script's values where they differ from the personal-agent ones (toolcall-rl/retool_qwen3_4b_prm_rl.sh). */
const REFERENCE_TOOL_CALL: Values = {
  'judge.binaryVotes': 1, // --prm-m 1
  'loss.klCoef': 0.01,
  'loss.klType': 'k3',
  'optimizer.lr': 1e-6,
  'batch.size': 256, // 32 problems x 8 rollouts
  'batch.toolCallSamples': 'trajectory', // generate_with_retool.py: one sample, tool outputs at loss_mask 0
};

/** Every leaf of a preset by dotted path, optional settings read through their accessors (their absence is a value). */
function leaves(preset: MethodPreset): Values {
  const out: Values = {};
  const walk = (v: unknown, at: string) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(x, at ? `${at}.${k}` : k);
    else out[at] = v;
  };
  walk(preset, '');
  out['advantage.hintSource'] = hintSourceOf(preset);
  out['advantage.opdTerm'] = opdTermOf(preset);
  out['loss.klType'] = klTypeOf(preset);
  out['session.lastTurn'] = lastTurnOf(preset);
  out['finetune.recompute'] = preset.finetune.recompute ?? 'none';
  return out;
}

/**
 * The backticked settings of the first column of docs/method.md's departures table that apply to
 * `scope`: a row written "`field` (tool-call)" names the field for the tool-call preset only.
 */
function namedSettings(scope: 'personal' | 'tool-call'): Set<string> {
  const page = readFileSync(resolve(ROOT, 'docs/method.md'), 'utf8');
  const section = page.slice(page.indexOf('## Departures from the reference'));
  const rows = section.split('\n').map((l) => /^\| `([^`]+)`( \(([^)]*)\))? \|/.exec(l));
  return new Set(rows.flatMap((m) => (m && (m[3] === undefined || m[3] === scope) ? [m[1]] : [])));
}

/** Fields whose default differs from `reference`, or that the reference has no value for. */
function departures(preset: MethodPreset, reference: Values): string[] {
  return Object.entries(leaves(preset))
    .filter(([path, value]) => !(path in reference) || JSON.stringify(value) !== JSON.stringify(reference[path]))
    .map(([path]) => path);
}

describe("docs/method.md's departures table", () => {
  const named = namedSettings('personal');

  it.each(METHODS)('names every field where the %s preset departs from the reference', (method) => {
    const missing = departures(makePreset(method), { ...REFERENCE_COMMON, ...REFERENCE_METHOD[method] }).filter((p) => !named.has(p));
    expect(missing, `add a row to docs/method.md#departures-from-the-reference for each of these, or make the default the reference's`).toEqual([]);
  });

  it('names every field where the tool-call preset departs from its script', () => {
    const reference = { ...REFERENCE_COMMON, ...REFERENCE_METHOD.binary, ...REFERENCE_TOOL_CALL };
    const toolCall = namedSettings('tool-call');
    const missing = departures(toolCallPreset(), reference).filter((p) => !toolCall.has(p));
    expect(missing, `add a row to docs/method.md#departures-from-the-reference for each of these, or make the default the reference's`).toEqual([]);
  });

  it('finds a changed default: a clip the reference does not have is a departure no row names', () => {
    const changed = makePreset('binary', { loss: { epsHigh: 0.3 } });
    const found = departures(changed, { ...REFERENCE_COMMON, ...REFERENCE_METHOD.binary });
    expect(found).toContain('loss.epsHigh');
    expect(named.has('loss.epsHigh')).toBe(false);
  });

  it('finds per-step tool-call samples a departure, and the table names the field for the tool-call track', () => {
    const reference = { ...REFERENCE_COMMON, ...REFERENCE_METHOD.binary, ...REFERENCE_TOOL_CALL };
    expect(departures(toolCallPreset(), reference)).not.toContain('batch.toolCallSamples');
    expect(departures(toolCallPreset({ batch: { toolCallSamples: 'step' } }), reference)).toContain('batch.toolCallSamples');
    expect(namedSettings('tool-call').has('batch.toolCallSamples')).toBe(true);
  });

  it("reads a row's scope: the tool-call batch size is no personal-agent departure", () => {
    expect(namedSettings('tool-call').has('batch.size')).toBe(true);
    expect(named.has('batch.size')).toBe(false);
    expect(named.has('finetune.mode')).toBe(true);
  });
});
