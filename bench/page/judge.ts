/**
 * What a judged turn costs when transformers.js plays the judge: one binary vote and one hint vote
 * (the Combined method's m = 1 each) on the fixtures' ONNX copies, through TransformersGenerator as
 * the lab runs it (chat template, logits processors, seeded draw). Random weights never stop early,
 * so every vote generates its whole token budget; the figure per token scales it to real answers.
 */
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from '../../src/rl/judge';
import { TransformersGenerator } from '../../src/generators/transformers';
import { median, now, round } from '../lib/stats';
import type { Maybe } from '../lib/types';
import { transformers } from './peer';
import { FILES_ROUTE, ORT_KEY, type JudgePlan, type JudgeTurnCell } from './protocol';

const action = 'Here is the story: a dog named Rex found a red ball in the park and shared it with a cat.';
const nextState = { role: 'user' as const, content: 'Nice, but make it shorter and give the cat a name, please.' };

async function cell(key: string, device: 'wasm' | 'webgpu', plan: JudgePlan, log: (l: string) => void): Promise<Maybe<JudgeTurnCell>> {
  await transformers();
  const dist = `${FILES_ROUTE}${ORT_KEY}/`;
  const t0 = now();
  const gen = await TransformersGenerator.load({
    modelId: key,
    device,
    dtype: 'fp32',
    localModelPath: FILES_ROUTE,
    allowRemoteModels: false,
    wasmPaths: { mjs: `${dist}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${dist}ort-wasm-simd-threaded.asyncify.wasm` },
  });
  const loadMs = round(now() - t0);
  try {
    const opts = (seed: number) => ({ temperature: 0.6, maxNewTokens: plan.maxNewTokens, seed });
    const turn = async (i: number) => {
      const start = now();
      await Promise.all([
        gen.generate(buildBinaryJudgePrompt(action, nextState), opts(2 * i)),
        gen.generate(buildHintJudgePrompt(action, nextState), opts(2 * i + 1)),
      ]);
      return now() - start;
    };
    const warm = await turn(0);
    log(`judge ${key} ${device}: warm-up turn ${Math.round(warm)} ms`);
    if (warm > plan.budgetMs) return { skipped: `one judged turn took ${Math.round(warm)} ms in the warm-up, over the ${plan.budgetMs} ms budget` };
    const times: number[] = [];
    for (let i = 1; i <= plan.reps; i++) times.push(await turn(i));
    const turnMs = median(times);
    return {
      device,
      dtype: 'fp32',
      loadMs,
      turnMs: round(turnMs),
      msPerToken: round(turnMs / (2 * plan.maxNewTokens)),
      votes: 2,
      maxNewTokens: plan.maxNewTokens,
      reps: plan.reps,
    };
  } finally {
    await gen.dispose();
  }
}

export async function measureJudgeTurns(plan: JudgePlan, log: (l: string) => void): Promise<Record<string, Record<string, Maybe<JudgeTurnCell>>>> {
  const out: Record<string, Record<string, Maybe<JudgeTurnCell>>> = {};
  for (const m of plan.models) {
    out[m.name] = {};
    for (const device of ['wasm', 'webgpu'] as const) {
      try {
        out[m.name][device] = await cell(m.peerKey, device, plan, log);
      } catch (e) {
        out[m.name][device] = { skipped: `failed: ${(e as Error).message}` };
      }
      log(`judge ${m.name} ${device}: ${JSON.stringify(out[m.name][device])}`);
    }
  }
  return out;
}
