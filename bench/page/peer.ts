/**
 * The peer: transformers.js (onnxruntime-web) on the same weights, in the same page, timed by
 * the same loop as the engine (lib/inference.ts). Models and onnxruntime's WASM come from the
 * bench server, never from the network.
 */
import type { PreTrainedModel } from '@huggingface/transformers';
import { measureBatches, type Generator } from '../lib/inference';
import { now, round } from '../lib/stats';
import type { PeerRun } from '../lib/types';
import { promptIds, type Workload } from '../lib/workload';
import { FILES_ROUTE, ORT_KEY } from './protocol';

type Library = typeof import('@huggingface/transformers');

let library: Promise<Library> | undefined;

/** transformers.js configured for local files only; loaded on first use. */
export function transformers(): Promise<Library> {
  library ??= import('@huggingface/transformers').then((lib) => {
    const { env } = lib;
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    // A path on the page's origin: a full URL would skip transformers.js's local lookup and fail
    // with "reading 'tokenizer_class'".
    env.localModelPath = FILES_ROUTE;
    // Load times should not depend on what an earlier run left in Cache Storage.
    env.useBrowserCache = false;
    // The cache loads the WASM factory from a blob: URL, which the app's CSP forbids.
    env.useWasmCache = false;
    const dist = `${FILES_ROUTE}${ORT_KEY}/`;
    // The build transformers.js picks itself (asyncify serves both WASM and WebGPU).
    env.backends.onnx.wasm!.wasmPaths = { mjs: `${dist}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${dist}ort-wasm-simd-threaded.asyncify.wasm` };
    return lib;
  });
  return library;
}

function peerGenerator(lib: Library, model: PreTrainedModel, batch: number, w: Workload): Generator {
  const vocab = (model.config as unknown as { vocab_size: number }).vocab_size;
  const ids = promptIds(batch, w.promptTokens, vocab).flat();
  const shape = [batch, w.promptTokens];
  return async (maxNewTokens, onStep) => {
    // Its first put() is the prompt, before any forward; every later one ends a step.
    let puts = 0;
    const streamer = { put: () => puts++ > 0 && onStep?.(), end: () => {} };
    await model.generate({
      input_ids: new lib.Tensor('int64', BigInt64Array.from(ids, BigInt), shape),
      attention_mask: new lib.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
      max_new_tokens: maxNewTokens,
      do_sample: false,
      // No end-of-sequence stop, as for the engine: every call generates maxNewTokens.
      eos_token_id: null,
      streamer,
    } as unknown as Parameters<PreTrainedModel['generate']>[0]);
  };
}

export async function measurePeer(key: string, device: PeerRun['device'], w: Workload, log: (line: string) => void): Promise<PeerRun> {
  const lib = await transformers();
  const label = `${key} transformers.js-${device}`;
  const t0 = now();
  const model = await lib.AutoModelForCausalLM.from_pretrained(key, { device, dtype: 'fp32' });
  const load = { ms: round(now() - t0) };
  log(`${label}: loaded in ${load.ms} ms`);
  try {
    const inference = await measureBatches(
      w,
      (batch) => peerGenerator(lib, model, batch, w),
      (line) => log(`${label} ${line}`),
    );
    return { library: `@huggingface/transformers ${lib.env.version}`, device, dtype: 'fp32', load, inference };
  } finally {
    await model.dispose();
  }
}
