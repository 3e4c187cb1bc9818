/** What the Node side asks of the bench page and what the page answers (types only). */
import type { AdapterReport, DurabilityCell, EngineRun, MatmulCell, Maybe, PeerRun } from '../lib/types';
import type { Workload } from '../lib/workload';
import type { PaperPlan, PaperRun } from '../lib/paper';

/** Every model folder is served at `${FILES_ROUTE}${key}/`, onnxruntime-web's dist at `${FILES_ROUTE}${ORT_KEY}/`. */
export const FILES_ROUTE = '/bench-files/';
export const ORT_KEY = 'onnxruntime-web';

export interface PagePlan {
  workload: Workload;
  /** `key` serves the engine's folder (safetensors), `peerKey` transformers.js's (onnx/model.onnx). */
  models: { key: string; name: string; peerKey: Maybe<string> }[];
}

export type PeerKey = 'transformers.js-webgpu' | 'transformers.js-wasm';

export interface PageModelResult {
  'webgpu-chromium': Maybe<EngineRun>;
  'cpu-chromium': Maybe<EngineRun>;
  peer: Record<PeerKey, Maybe<PeerRun>>;
}

export interface PageResult {
  userAgent: string;
  hardwareConcurrency: number;
  crossOriginIsolated: boolean;
  adapter: Maybe<AdapterReport>;
  matmul: Maybe<MatmulCell>;
  /** transformers.js's version and onnxruntime-web's WASM thread count as the page ran them. */
  peerRuntime: Maybe<{ transformers: string; ortWasmThreads: number | string }>;
  models: Record<string, PageModelResult>;
}

/** What judge() is asked to time (page/judge.ts runs it), and one device's answer for a model. */
export interface JudgePlan {
  models: { name: string; peerKey: string }[];
  /** New tokens per vote. */
  maxNewTokens: number;
  reps: number;
  /** A device whose warm-up turn takes longer than this is reported as skipped. */
  budgetMs: number;
}

export interface JudgeTurnCell {
  device: 'wasm' | 'webgpu';
  dtype: 'fp32';
  loadMs: number;
  /** Median wall time of one judged turn (both votes, run together as the run loop does). */
  turnMs: number;
  /** turnMs over the tokens the two votes generated. */
  msPerToken: number;
  votes: 2;
  maxNewTokens: number;
  reps: number;
}

declare global {
  interface Window {
    /** durability() needs a page whose profile is on disk (see lib/durability.ts). */
    /** judge() times a judged turn with transformers.js as the judge (page/judge.ts). */
    __bench?: {
      run(plan: PagePlan): Promise<PageResult>;
      durability(): Promise<DurabilityCell>;
      judge(plan: JudgePlan): Promise<Record<string, Record<string, Maybe<JudgeTurnCell>>>>;
      /** paper() runs the paper-size model (lib/paper.ts) on the tab's WebGPU. */
      paper(plan: PaperPlan): Promise<PaperRun>;
    };
  }
}
