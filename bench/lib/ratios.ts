/**
 * Engine over peer, like with like: the engine's WebGPU backend against onnxruntime-web's WebGPU
 * backend, and the engine's CPU backend against onnxruntime-web's WASM backend. Above 1 means
 * the engine is faster.
 */
import { round } from './stats';
import { isSkipped, type BatchKey, type InferenceCell, type Maybe } from './types';

interface HasInference {
  inference: Record<BatchKey, Maybe<InferenceCell>>;
}

export type RatioCells = Record<BatchKey, Maybe<{ prefill: number; decode: number }>>;

export function ratio(engine: Maybe<HasInference>, peer: Maybe<HasInference>): Maybe<RatioCells> {
  if (isSkipped(engine)) return { skipped: `engine: ${engine.skipped}` };
  if (isSkipped(peer)) return { skipped: `peer: ${peer.skipped}` };
  const out: RatioCells = {};
  for (const [key, e] of Object.entries(engine.inference) as [BatchKey, Maybe<InferenceCell>][]) {
    const p = peer.inference[key] ?? { skipped: 'not measured' };
    if (isSkipped(e)) out[key] = { skipped: `engine: ${e.skipped}` };
    else if (isSkipped(p)) out[key] = { skipped: `peer: ${p.skipped}` };
    else {
      out[key] = {
        prefill: round(e.prefillTokensPerS.median / p.prefillTokensPerS.median),
        decode: round(e.decodeTokensPerS.median / p.decodeTokensPerS.median),
      };
    }
  }
  return out;
}
