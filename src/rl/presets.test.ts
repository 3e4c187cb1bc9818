import { describe, it, expect } from 'vitest';
import { PresetError } from './errors';
import {
  fullFinetuneLrWarning,
  hintSourceOf,
  idleTimeoutOf,
  klTypeOf,
  lastTurnOf,
  LORA_SETTINGS,
  loraPreset,
  makePreset,
  opdTermOf,
  klTermOf,
  setOpdTerm,
  parsePreset,
  presetSwitchedTo,
  toolCallPreset,
  topKSelectPreset,
  hintSelectionOf,
  TOOL_CALL_KL_COEF,
  TOOL_CALL_SAMPLES,
  toolCallSamplesOf,
  type MethodName,
  type MethodPreset,
  type PresetOverrides,
} from './presets';

describe('makePreset', () => {
  it('binary serialises exactly as stored in a run file', () => {
    expect(JSON.stringify(makePreset('binary'))).toBe(
      '{"method":"binary",' +
        '"judge":{"binaryVotes":3,"hintVotes":0,"temperature":0.6,"maxNewTokens":4096,"minHintChars":10},' +
        '"advantage":{"weights":{"binary":1,"opd":0},"teacher":"initial",' +
        '"teacherContext":{"noUserMessage":"new-user-message","trim":true},' +
        '"hintSelection":{"rule":"longest","maxCandidates":3,"k":4,"clip":0}},' +
        '"loss":{"epsLow":0.2,"epsHigh":0.28,"klCoef":0,"aggregation":"sample-mean"},' +
        '"optimizer":{"lr":0.0001,"weightDecay":0.1,"betas":[0.9,0.98],"eps":1e-8},' +
        '"batch":{"size":16,"zeroAdvantage":"at-least-one-per-session"},' +
        '"finetune":{"mode":"lora","lora":{"rank":16,"alpha":32,' +
        '"targets":["q_proj","k_proj","v_proj","o_proj","gate_proj","up_proj","down_proj"]}},' +
        '"session":{"idleTimeoutMs":1800000}}',
    );
  });

  // The upper clip is each script's: --eps-clip-high 0.28 for Binary and Combined; the OPD script
  // sets none, so slime clips at --eps-clip (0.2) on both sides.
  const shapes: [MethodName, number, number, number, number, number][] = [
    ['binary', 3, 0, 1, 0, 0.28],
    ['opd', 0, 1, 0, 1, 0.2],
    ['combined', 1, 1, 1, 1, 0.28],
  ];
  it.each(shapes)('%s: votes %d/%d, weights %d/%d, clip high %d, shared defaults', (method, bv, hv, wb, wo, high) => {
    const p = makePreset(method);
    expect(p.judge).toMatchObject({ binaryVotes: bv, hintVotes: hv, temperature: 0.6 });
    expect(p.advantage.weights).toEqual({ binary: wb, opd: wo });
    expect(p.advantage.teacher).toBe('initial');
    expect(p.loss).toEqual({ epsLow: 0.2, epsHigh: high, klCoef: 0, aggregation: 'sample-mean' });
    expect(klTypeOf(p)).toBe('low_var_kl');
    expect(lastTurnOf(p)).toBe('judged');
    expect(p.batch.size).toBe(16);
    expect(p.optimizer).toEqual({ lr: 1e-4, weightDecay: 0.1, betas: [0.9, 0.98], eps: 1e-8 });
  });

  it('the tool-call preset is binary with the reference tool-call script’s PRM votes (1), unclamped k3 KL of 0.01 and one sample per trajectory', () => {
    const p = toolCallPreset({ batch: { size: 32 } });
    expect(TOOL_CALL_KL_COEF).toBe(0.01);
    expect(p).toEqual(
      makePreset('binary', { batch: { size: 32, toolCallSamples: 'trajectory' }, judge: { binaryVotes: 1 }, loss: { klCoef: 0.01, klType: 'k3' } }),
    );
    expect(toolCallSamplesOf(p)).toBe('trajectory');
    expect(klTypeOf(p)).toBe('k3');
    expect(toolCallPreset({ loss: { klCoef: 0 } }).loss.klCoef).toBe(0);
    expect(toolCallPreset({ judge: { binaryVotes: 3 }, loss: { klType: 'low_var_kl' } })).toMatchObject({
      judge: { binaryVotes: 3 },
      loss: { klType: 'low_var_kl' },
    });
  });

  it('keeps one sample per step as a named option, refuses another value, and reads a preset stored without the setting as per-step', () => {
    expect(toolCallSamplesOf(toolCallPreset({ batch: { toolCallSamples: 'step' } }))).toBe('step');
    expect(TOOL_CALL_SAMPLES).toEqual(['trajectory', 'step']);
    expect(() => toolCallPreset({ batch: { toolCallSamples: 'episode' as never } })).toThrow('"batch.toolCallSamples"');
    const stored = JSON.parse(JSON.stringify(toolCallPreset())) as MethodPreset;
    delete stored.batch.toolCallSamples;
    expect(toolCallSamplesOf(parsePreset(stored))).toBe('step');
    expect(makePreset('binary').batch).not.toHaveProperty('toolCallSamples');
  });

  it('offers both KL estimators, labelled, and reads a preset stored without one as low_var_kl', () => {
    const k3 = makePreset('combined', { loss: { klCoef: 0.1, klType: 'k3' } });
    expect(parsePreset(JSON.parse(JSON.stringify(k3)))).toEqual(k3);
    expect(() => makePreset('combined', { loss: { klType: 'k2' as never } })).toThrow('"loss.klType"');
    // Carried with the KL coefficient when the method is switched.
    expect(presetSwitchedTo('opd', k3).loss).toEqual({ epsLow: 0.2, epsHigh: 0.2, klCoef: 0.1, klType: 'k3', aggregation: 'sample-mean' });
    expect('klType' in makePreset('opd').loss).toBe(false);
  });

  it("offers the reference's two LoRA set-ups: slime's lr 1e-5 rank 16 alpha 32, Tinker's lr 1e-4 rank 32", () => {
    expect(LORA_SETTINGS).toEqual({ slime: { lr: 1e-5, rank: 16, alpha: 32 }, tinker: { lr: 1e-4, rank: 32, alpha: 64 } });
    const slime = loraPreset('combined', 'slime');
    expect(slime.optimizer.lr).toBe(1e-5);
    expect(slime.finetune.lora).toMatchObject({ rank: 16, alpha: 32 });
    expect(slime.finetune.lora.targets).toHaveLength(7);
    const tinker = loraPreset('opd', 'tinker', { batch: { size: 4 } });
    expect(tinker).toMatchObject({ optimizer: { lr: 1e-4 }, finetune: { lora: { rank: 32, alpha: 64 } }, batch: { size: 4 } });
    expect(loraPreset('binary', 'slime', { optimizer: { lr: 3e-5 }, finetune: { lora: { rank: 8 } } })).toMatchObject({
      optimizer: { lr: 3e-5 },
      finetune: { lora: { rank: 8, alpha: 32 } },
    });
  });

  it('warns when full fine-tuning keeps a LoRA learning rate, not at the reference’s 1e-5', () => {
    const printed = makePreset('combined', { optimizer: { lr: 5e-4 } });
    const switched = parsePreset({ ...printed, finetune: { ...printed.finetune, mode: 'full' } });
    expect(fullFinetuneLrWarning(switched)).toMatch(/^preset\.optimizer\.lr is 0\.0005 with finetune\.mode "full".*set optimizer\.lr to 0\.00001/);
    expect(fullFinetuneLrWarning(makePreset('combined', { finetune: { mode: 'full' } }))).toBeNull();
    expect(fullFinetuneLrWarning(makePreset('combined', { finetune: { mode: 'full' }, optimizer: { lr: 5e-5 } }))).toBeNull();
    expect(fullFinetuneLrWarning(printed)).toBeNull();
  });

  it('offers the top-k distillation term beside sampled-token OPD, for the methods with a hint judge', () => {
    expect(opdTermOf(makePreset('opd'))).toBe('sampled-token');
    const p = topKSelectPreset('combined', { advantage: { opdTerm: 'topk-distill' } });
    expect(opdTermOf(p)).toBe('topk-distill');
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(presetSwitchedTo('opd', p).advantage.opdTerm).toBe('topk-distill');
    expect(presetSwitchedTo('binary', p).advantage).not.toHaveProperty('opdTerm');
    expect(() => makePreset('binary', { advantage: { opdTerm: 'topk-distill' } })).toThrow('"advantage.opdTerm"');
    expect(() => makePreset('combined', { advantage: { opdTerm: 'topk-distill', hintSource: 'shuffled' } })).toThrow('"advantage.opdTerm"');
  });

  it('offers the reverse-KL term with its own k, refused without it, with it beside another term, or with a tail over the whole vocabulary', () => {
    const p = makePreset('opd', { advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 0, tail: false } } });
    expect(opdTermOf(p)).toBe('reverse-kl');
    expect(klTermOf(p)).toEqual({ term: 'reverse-kl', k: 0, tail: false });
    expect(klTermOf(makePreset('opd'))).toBeNull();
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    const top = makePreset('combined', { advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 50, tail: true } } });
    expect(presetSwitchedTo('opd', top).advantage).toMatchObject({ opdTerm: 'reverse-kl', reverseKl: { k: 50, tail: true } });
    expect(presetSwitchedTo('binary', top).advantage).not.toHaveProperty('reverseKl');
    expect(() => makePreset('opd', { advantage: { opdTerm: 'reverse-kl' } })).toThrow(/"advantage\.reverseKl" is missing; opdTerm "reverse-kl" needs/);
    expect(() => makePreset('opd', { advantage: { reverseKl: { k: 4, tail: false } } })).toThrow(
      /"advantage\.reverseKl" is set but opdTerm is "sampled-token"/,
    );
    expect(() => makePreset('opd', { advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 0, tail: true } } })).toThrow('"advantage.reverseKl.tail"');
    expect(() => makePreset('opd', { advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 65, tail: false } } })).toThrow('"advantage.reverseKl.k"');
    expect(() => makePreset('binary', { advantage: { opdTerm: 'reverse-kl', reverseKl: { k: 0, tail: false } } })).toThrow('"advantage.opdTerm"');
    // Every message is one line.
    for (const bad of [{ opdTerm: 'reverse-kl' as const }, { reverseKl: { k: 4, tail: false } }]) {
      try {
        makePreset('opd', { advantage: bad });
      } catch (e) {
        expect((e as Error).message).not.toContain('\n');
      }
    }
  });

  it('offers the forward-KL term over a top-k set only, with its own settings, and switches between the two KL terms', () => {
    const p = makePreset('opd', { advantage: { opdTerm: 'forward-kl', forwardKl: { k: 16, tail: true } } });
    expect(klTermOf(p)).toEqual({ term: 'forward-kl', k: 16, tail: true });
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(presetSwitchedTo('combined', p).advantage).toMatchObject({ opdTerm: 'forward-kl', forwardKl: { k: 16, tail: true } });
    expect(presetSwitchedTo('binary', p).advantage).not.toHaveProperty('forwardKl');
    expect(() => makePreset('opd', { advantage: { opdTerm: 'forward-kl' } })).toThrow(/"advantage\.forwardKl" is missing; opdTerm "forward-kl" needs k 1-64/);
    expect(() => makePreset('opd', { advantage: { opdTerm: 'forward-kl', forwardKl: { k: 0, tail: false } } })).toThrow('"advantage.forwardKl.k"');
    expect(() => makePreset('opd', { advantage: { opdTerm: 'forward-kl', forwardKl: { k: 8, tail: true }, reverseKl: { k: 8, tail: true } } })).toThrow(
      /"advantage\.reverseKl" is set but opdTerm is "forward-kl"/,
    );
    expect(() => makePreset('binary', { advantage: { opdTerm: 'forward-kl', forwardKl: { k: 8, tail: true } } })).toThrow('"advantage.opdTerm"');
    // The editor's switch: each KL term gets its settings and drops the other's.
    const advantage = structuredClone(p.advantage);
    setOpdTerm(advantage, 'reverse-kl');
    expect(advantage).toMatchObject({ opdTerm: 'reverse-kl', reverseKl: { k: 16, tail: true } });
    expect(advantage).not.toHaveProperty('forwardKl');
    setOpdTerm(advantage, 'sampled-token');
    expect(advantage).not.toHaveProperty('reverseKl');
  });

  it("offers the reference runners' last turn: never judged, and no idle timeout", () => {
    const p = makePreset('combined', { session: { lastTurn: 'unjudged' } });
    expect(lastTurnOf(p)).toBe('unjudged');
    expect(idleTimeoutOf(p)).toBe(Infinity);
    expect(idleTimeoutOf(makePreset('combined'))).toBe(30 * 60 * 1000);
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(() => makePreset('combined', { session: { lastTurn: 'never' as never } })).toThrow('"session.lastTurn"');
  });

  it('switches the idle timeout off with 0, a value JSON keeps (Infinity it would not)', () => {
    const off = makePreset('combined', { session: { idleTimeoutMs: 0 } });
    expect(idleTimeoutOf(off)).toBe(Infinity);
    expect(parsePreset(JSON.parse(JSON.stringify(off)))).toEqual(off);
    expect(() => makePreset('combined', { session: { idleTimeoutMs: -1 } })).toThrow('"session.idleTimeoutMs"');
  });

  it.each(shapes.map(([m]) => m))('%s round-trips through JSON and parsePreset', (method) => {
    const p = makePreset(method);
    const back = JSON.parse(JSON.stringify(p));
    expect(back).toEqual(p);
    expect(parsePreset(back)).toEqual(p);
  });

  const overrides: [string, MethodName, PresetOverrides, (p: ReturnType<typeof makePreset>) => unknown, unknown][] = [
    ['judge votes', 'binary', { judge: { binaryVotes: 5 } }, (p) => p.judge.binaryVotes, 5],
    ['other judge fields kept', 'binary', { judge: { binaryVotes: 5 } }, (p) => p.judge.temperature, 0.6],
    ['full fine-tune takes lr 1e-5', 'combined', { finetune: { mode: 'full' } }, (p) => p.optimizer.lr, 1e-5],
    ['explicit lr wins', 'combined', { finetune: { mode: 'full' }, optimizer: { lr: 3e-5 } }, (p) => p.optimizer.lr, 3e-5],
    ['alpha follows rank', 'opd', { finetune: { lora: { rank: 32 } } }, (p) => p.finetune.lora.alpha, 64],
    ['explicit alpha wins', 'opd', { finetune: { lora: { rank: 32, alpha: 16 } } }, (p) => p.finetune.lora.alpha, 16],
    ['arrays are replaced', 'opd', { finetune: { lora: { targets: ['q_proj', 'v_proj'] } } }, (p) => p.finetune.lora.targets, ['q_proj', 'v_proj']],
    ['betas', 'binary', { optimizer: { betas: [0.8, 0.9] } }, (p) => p.optimizer.betas, [0.8, 0.9]],
    ['teacher', 'opd', { advantage: { teacher: 'current' } }, (p) => p.advantage.teacher, 'current'],
    ['aggregation', 'binary', { loss: { aggregation: 'token-mean' } }, (p) => p.loss.aggregation, 'token-mean'],
    ['weights', 'combined', { advantage: { weights: { opd: 0.5 } } }, (p) => p.advantage.weights, { binary: 1, opd: 0.5 }],
    ['zero policy', 'binary', { batch: { zeroAdvantage: 'mask-all' } }, (p) => p.batch.zeroAdvantage, 'mask-all'],
  ];
  it.each(overrides)('override: %s', (_name, method, over, pick, expected) => {
    expect(pick(makePreset(method, over))).toEqual(expected);
  });

  it('returns independent objects', () => {
    const a = makePreset('binary');
    a.finetune.lora.targets.push('lm_head');
    a.optimizer.betas[0] = 0;
    expect(makePreset('binary').finetune.lora.targets).toHaveLength(7);
    expect(makePreset('binary').optimizer.betas).toEqual([0.9, 0.98]);
  });

  const bad: [string, MethodName, unknown, string][] = [
    ['unknown setting', 'binary', { judge: { votes: 3 } }, 'judge.votes'],
    ['unknown section', 'binary', { trainer: {} }, 'trainer'],
    ['epsLow of 1', 'binary', { loss: { epsLow: 1 } }, 'loss.epsLow'],
    ['negative lr', 'binary', { optimizer: { lr: -1 } }, 'optimizer.lr'],
    ['fractional votes', 'binary', { judge: { binaryVotes: 1.5 } }, 'judge.binaryVotes'],
    ['binary judge switched off for binary', 'binary', { judge: { binaryVotes: 0 } }, 'judge.binaryVotes'],
    ['hint judge switched off for combined', 'combined', { judge: { hintVotes: 0 } }, 'judge.hintVotes'],
    ['unknown aggregation', 'binary', { loss: { aggregation: 'mean' } }, 'loss.aggregation'],
    ['beta of 1', 'binary', { optimizer: { betas: [0.9, 1] } }, 'optimizer.betas[1]'],
    ['empty LoRA target', 'binary', { finetune: { lora: { targets: [''] } } }, 'finetune.lora.targets[0]'],
    ['batch size 0', 'binary', { batch: { size: 0 } }, 'batch.size'],
  ];
  it.each(bad)('refuses %s, naming the field', (_name, method, over, field) => {
    let error: unknown;
    try {
      makePreset(method, over as PresetOverrides);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PresetError);
    expect((error as PresetError).field).toBe(field);
  });

  it('refuses an unknown method', () => {
    expect(() => makePreset('grpo' as MethodName)).toThrow(PresetError);
  });
});

describe('parsePreset', () => {
  const bad: [string, (p: Record<string, any>) => void, string][] = [
    ['missing section', (p) => delete p.loss, 'loss'],
    ['missing field', (p) => delete p.judge.temperature, 'judge.temperature'],
    ['extra field', (p) => (p.loss.clip = 0.3), 'loss.clip'],
    ['wrong type', (p) => (p.batch.size = '16'), 'batch.size'],
    ['wrong method', (p) => (p.method = 'ppo'), 'method'],
    ['unknown recomputation', (p) => (p.finetune.recompute = 'all'), 'finetune.recompute'],
  ];
  it.each(bad)('refuses %s', (_name, mutate, field) => {
    const p = JSON.parse(JSON.stringify(makePreset('combined')));
    mutate(p);
    expect(() => parsePreset(p)).toThrow(PresetError);
    expect(() => parsePreset(p)).toThrow(`"${field}"`);
  });

  it('reads finetune.recompute when a run file has it (absent: none)', () => {
    const p = makePreset('binary', { finetune: { recompute: 'layer' } });
    expect(parsePreset(JSON.parse(JSON.stringify(p))).finetune.recompute).toBe('layer');
    expect(makePreset('binary').finetune.recompute).toBeUndefined();
  });

  it('refuses something that is not an object', () => {
    expect(() => parsePreset(null)).toThrow(PresetError);
    expect(() => parsePreset([1])).toThrow(PresetError);
  });
});

describe('makePreset isolation from overrides', () => {
  it('does not share arrays with the overrides', () => {
    const targets = ['q_proj'];
    const betas: [number, number] = [0.8, 0.9];
    const p = makePreset('binary', { finetune: { lora: { targets } }, optimizer: { betas } });
    targets.push('k_proj');
    betas[0] = 0;
    expect(p.finetune.lora.targets).toEqual(['q_proj']);
    expect(p.optimizer.betas).toEqual([0.8, 0.9]);
  });
});

describe("the reference's per-method settings", () => {
  it('the hint judge may write 8192 tokens and every sample trains in OPD and Combined; Binary keeps 4096 and one zero-advantage sample per session', () => {
    expect(makePreset('binary')).toMatchObject({ judge: { maxNewTokens: 4096 }, batch: { zeroAdvantage: 'at-least-one-per-session' } });
    for (const method of ['opd', 'combined'] as const)
      expect(makePreset(method)).toMatchObject({ judge: { maxNewTokens: 8192 }, batch: { zeroAdvantage: 'train-all' } });
  });
});

describe('presetSwitchedTo', () => {
  it("takes the method's votes and weights and keeps the training settings it is switched from", () => {
    const make = makePreset;
    const from = make('combined', { optimizer: { lr: 2e-3 }, batch: { size: 4 }, finetune: { lora: { rank: 8 } }, loss: { klCoef: 0.05 } });
    const binary = presetSwitchedTo('binary', from);
    expect(binary.method).toBe('binary');
    expect(binary.judge).toEqual(make('binary').judge);
    expect(binary.advantage).toEqual(make('binary').advantage);
    expect(binary.optimizer).toEqual(from.optimizer);
    // The batch size carries over; the zero-advantage rule is the method's (the reference's Binary server only keeps one per session).
    expect(binary.batch).toEqual({ size: 4, zeroAdvantage: 'at-least-one-per-session' });
    expect(from.batch.zeroAdvantage).toBe('train-all');
    expect(binary.finetune).toEqual(from.finetune);
    expect(binary.loss).toEqual({ ...make('binary').loss, klCoef: 0.05 });
    // The clip is the method's own: OPD's script clips 0.2 / 0.2.
    expect(presetSwitchedTo('opd', from).loss).toEqual({ ...make('opd').loss, klCoef: 0.05 });
  });

  it('carries top-k hint selection and its hint votes between OPD and Combined, never into Binary RL', () => {
    const from = topKSelectPreset('opd', { advantage: { hintSelection: { k: 8 } } });
    const combined = presetSwitchedTo('combined', from);
    expect(combined.advantage.hintSelection).toEqual({ rule: 'topk-sequence', maxCandidates: 3, k: 8, clip: 1 });
    // The binary judge keeps the method's own votes: OPD's preset has none to carry.
    expect(combined.judge).toEqual({ ...makePreset('combined').judge, hintVotes: 3 });
    expect(presetSwitchedTo('binary', from).advantage).toEqual(makePreset('binary').advantage);
    // The paper's rule is each method's own default anyway.
    expect(presetSwitchedTo('combined', makePreset('opd'))).toEqual(makePreset('combined'));
  });
});

describe('hint selection', () => {
  it('defaults to the paper: the longest hint, no clip', () => {
    for (const m of ['binary', 'opd', 'combined'] as const) {
      expect(makePreset(m).advantage.hintSelection).toEqual({ rule: 'longest', maxCandidates: 3, k: 4, clip: 0 });
    }
  });

  it('a run file written before the setting existed opens unchanged, and means the longest-hint rule', () => {
    const stored = JSON.parse(JSON.stringify(makePreset('opd')));
    delete stored.advantage.hintSelection;
    const parsed = parsePreset(stored);
    expect(parsed).toEqual(stored);
    expect(hintSelectionOf(parsed)).toEqual({ rule: 'longest', maxCandidates: 3, k: 4, clip: 0 });
  });

  it("topKSelectPreset is the reference's top-k select run: 3 votes, 3 candidates, top-4, sequence winner, clip 1", () => {
    const p = topKSelectPreset('opd');
    expect(p.judge.hintVotes).toBe(3);
    // The reference's run is Combined, and its PRM_M = 3 sets the binary judge's votes too.
    expect(topKSelectPreset('combined').judge).toMatchObject({ binaryVotes: 3, hintVotes: 3 });
    expect(p.judge.binaryVotes).toBe(0);
    expect(p.advantage.hintSelection).toEqual({ rule: 'topk-sequence', maxCandidates: 3, k: 4, clip: 1 });
    // Its loss (openclaw_topk_select_loss, subset "student") is the top-k distillation term.
    expect(opdTermOf(p)).toBe('topk-distill');
    expect(opdTermOf(topKSelectPreset('opd', { advantage: { opdTerm: 'sampled-token' } }))).toBe('sampled-token');
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    const q = topKSelectPreset('combined', { judge: { hintVotes: 5 }, advantage: { hintSelection: { rule: 'topk-token', k: 8 } } });
    expect(q.judge.hintVotes).toBe(5);
    expect(q.advantage.hintSelection).toEqual({ rule: 'topk-token', maxCandidates: 3, k: 8, clip: 1 });
  });

  it.each([
    ['rule', { rule: 'shortest' }],
    ['k', { k: 0 }],
    ['k', { k: 65 }],
    ['maxCandidates', { maxCandidates: 0 }],
    ['clip', { clip: -1 }],
  ])('refuses a bad %s', (field, bad) => {
    const p = JSON.parse(JSON.stringify(makePreset('opd')));
    Object.assign(p.advantage.hintSelection, bad);
    expect(() => parsePreset(p)).toThrow(`"advantage.hintSelection.${field}"`);
  });
});

describe('the other-child hint source', () => {
  it('is a preset setting of OPD and Combined, with the longest-hint rule, refused in one actionable line otherwise', () => {
    const p = makePreset('opd', { advantage: { hintSource: 'other-child' } });
    expect(hintSourceOf(p)).toBe('other-child');
    expect(parsePreset(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(hintSourceOf(makePreset('combined', { advantage: { hintSource: 'other-child' } }))).toBe('other-child');
    expect(() => makePreset('binary', { advantage: { hintSource: 'other-child' } })).toThrow(
      'is "other-child" but method "binary" uses no hint; use "opd" or "combined"',
    );
    const topK = () => topKSelectPreset('combined', { advantage: { hintSource: 'other-child' } });
    expect(topK).toThrow(PresetError);
    expect(topK).toThrow('is "other-child", which works with hintSelection.rule "longest" only; set that rule or hintSource "judge"');
    for (const bad of [() => makePreset('binary', { advantage: { hintSource: 'other-child' } }), topK]) {
      try {
        bad();
      } catch (e) {
        expect((e as PresetError).field).toBe('advantage.hintSource');
        expect((e as Error).message).not.toContain('\n');
      }
    }
    // A method switched to keeps the hint source the switch asks for, not the one it came from.
    expect(hintSourceOf(presetSwitchedTo('combined', p))).toBe('judge');
  });
});
