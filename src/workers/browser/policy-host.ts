/**
 * What runs inside the policy worker: the engine on one GPUDevice, serving and training
 * (docs/architecture.md#workers-and-their-messages). Plain class so it can be tested without
 * a worker; policy.worker.ts only exposes it with comlink.
 *
 * A lost GPU device (driver reset, out of memory, a tab in the background too long) is caught
 * here: the next call reloads the model and the last finished step's adapter on a fresh device
 * and goes on, and the page is told so it can log the event.
 */
import { usesToolCallTags } from '../../rl/tool-calls';
import type { MethodPreset, TeacherSource } from '../../rl/presets';
import type { Backend, BackendName } from '../../gpu/backend';
import { browserCpuBackend } from '../../gpu/cpu-fast/browser';
import { FastCpuBackend } from '../../gpu/cpu-fast/backend';
import { DeviceLostError } from '../../gpu/errors';
import { resolveWeightFormat } from '../../gpu/load';
import type { PeftFiles } from '../../gpu/peft';
import { Policy, type BaseModelReplies } from '../../gpu/policy';
import type { WeightFormat } from '../../gpu/quant';
import type { FileProgress } from '../../models/source';
import { createWebGPUBackend, type WebGPUBackend } from '../../gpu/webgpu/backend';
import {
  EnginePolicyService,
  NoAdapterError,
  policyCommit,
  type PolicyReply,
  type PolicyRequest,
  type ScoredTopK,
  type ScoreItem,
  type TrainItem,
  type TrainResult,
} from '../../runtime/policy-service';
import { loadError, pinnedLocation, policySource, type HubAccess, type ModelLocation } from './policy-source';

export type { ModelLocation } from './policy-source';

/** How long a failed GPU call waits for device.lost to settle before it is a real error. */
const LOSS_GRACE_MS = 1000;

export interface PolicyLoadRequest {
  location: ModelLocation;
  backend: BackendName;
  /** How the weight matrices are stored; absent: f16 on WebGPU, f32 on the CPU. */
  weightFormat?: WeightFormat;
  preset: MethodPreset;
  seed: number;
  /** The run's sampling temperature, which scoring and training divide the logits by (EnginePolicyService). */
  temperature: number;
  /** What a base-model policy is shown of the user's later messages (the scenario's choice). */
  replies?: BaseModelReplies;
}

export interface PolicyInfo {
  label: string;
  backend: BackendName;
  architecture: string;
  parameters: number;
  weightBytes: number;
  hasChatTemplate: boolean;
  /** The chat template lists tools and asks for `<tool_call>` JSON (what the homework workspace needs). */
  toolCallTags: boolean;
  f16: boolean;
  /** How the weight matrices were stored. */
  weightFormat: WeightFormat;
  /** File name -> SHA-256 of config.json and the weights, for the run's modelRefs. */
  files: Record<string, string>;
  /** The hub commit the files were read at, for the run's config; null for a bundled model or picked files. */
  commit: string | null;
}

export type PolicyEvent = { type: 'progress'; progress: FileProgress } | { type: 'device-lost'; message: string } | { type: 'recovered'; version: number };

/** Frees a backend's GPU device and the memory on it, or the fast CPU backend's threads. */
function release(backend: Backend): void {
  try {
    if (backend instanceof FastCpuBackend) backend.close();
    (backend as Partial<WebGPUBackend>).destroy?.();
  } catch {
    // A device already lost has nothing more to free.
  }
}

export class PolicyHost {
  private service: EnginePolicyService | null = null;
  private backend: Backend | null = null;
  private request: PolicyLoadRequest | null = null;
  private lastCheckpoint: { files: PeftFiles; version: number } | null = null;
  private lost = false;
  private recovering: Promise<void> | null = null;
  private readonly aborts = new Map<string, AbortController>();
  private listener: ((e: PolicyEvent) => void) | null = null;

  /** `hub`: where hub files are fetched (tests point it at a local hub); the page's fetch and Cache Storage by default. */
  constructor(private readonly hub: HubAccess = {}) {}

  /** One listener (a comlink proxy from the page) for progress and device events. */
  onEvent(listener: (e: PolicyEvent) => void): void {
    this.listener = listener;
  }

  private emit(e: PolicyEvent): void {
    this.listener?.(e);
  }

  async load(request: PolicyLoadRequest): Promise<PolicyInfo> {
    this.request = request;
    this.lastCheckpoint = null;
    // A new model starts at version 0 with every version it trains kept for pinned requests.
    this.pinsLost = false;
    await this.build();
    const p = this.service!.policy;
    const commit = policyCommit(this.service!) ?? null;
    // A reload after a lost device reads the files of this commit, not what the branch names by then.
    this.request = { ...request, location: pinnedLocation(request.location, commit) };
    const parameters = [...p.model.weights.values()].reduce((n, t) => n + t.size, 0);
    return {
      label: this.service!.label,
      backend: request.backend,
      architecture: p.config.architecture,
      parameters,
      weightBytes: p.weightBytes,
      hasChatTemplate: p.tokenizer.hasChatTemplate,
      toolCallTags: usesToolCallTags(p.tokenizer.chatTemplateText),
      f16: (this.backend as Partial<WebGPUBackend>).f16 === true,
      weightFormat: resolveWeightFormat(request.weightFormat, this.backend!),
      files: { ...p.files },
      commit,
    };
  }

  private async build(): Promise<void> {
    const req = this.request!;
    // Said before the model is downloaded: the lab checkpoints, resumes and recovers a run by its
    // LoRA adapter, which a full fine-tuning run does not have.
    if (req.preset.finetune.mode === 'full') {
      throw new NoAdapterError(
        'full fine-tuning runs from the command line (nextstate run, nextstate train --full); the lab checkpoints LoRA adapters only, so choose LoRA here',
      );
    }
    const backend = req.backend === 'webgpu' ? await createWebGPUBackend() : await browserCpuBackend(req.backend);
    let policy: Policy;
    try {
      policy = await Policy.load(policySource(req.location, this.hub), backend, {
        onProgress: (progress) => this.emit({ type: 'progress', progress }),
        weightFormat: req.weightFormat,
        replies: req.replies,
      });
    } catch (e) {
      release(backend);
      throw loadError(req.location, e);
    }
    // A new load's model replaces the last one: its device goes now, not when the worker is collected.
    const previous = this.backend;
    this.backend = backend;
    if (previous && previous !== backend) release(previous);
    this.service = new EnginePolicyService(policy, req.preset, req.seed, req.temperature);
    this.lost = false;
    const gpu = backend as Partial<WebGPUBackend>;
    void gpu.lost?.then((info) => {
      if (this.backend !== backend) return;
      this.lost = true;
      this.emit({ type: 'device-lost', message: info.message || String(info.reason) });
    });
  }

  /** Rebuilds after a lost device: same model, last checkpoint, then the call goes on. */
  private async ready(): Promise<EnginePolicyService> {
    if (!this.service) throw new Error('no policy is loaded: call load() first');
    if (this.lost) {
      this.recovering ??= (async () => {
        await this.build();
        if (this.lastCheckpoint) await this.service!.restore(this.lastCheckpoint.files, this.lastCheckpoint.version);
        // Only the checkpoint's version came back: requests pinned to others are served with it,
        // and the run is no longer a function of its seed alone.
        this.pinsLost = true;
        this.emit({ type: 'recovered', version: this.service!.servingVersion() });
      })().finally(() => (this.recovering = null));
      await this.recovering;
    }
    return this.service!;
  }

  /** Runs fn; if the device was lost under it, recovers once and runs it again. */
  private async withRecovery<T>(fn: (s: EnginePolicyService) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.ready());
    } catch (e) {
      if (!(e instanceof DeviceLostError) && !this.lost && !(await this.lostSoon())) throw e;
      this.lost = true;
      return fn(await this.ready());
    }
  }

  /**
   * A lost device can fail a pending mapAsync (an AbortError) before device.lost settles, so a
   * failure on a GPU backend waits briefly for the loss to show before it counts as real.
   */
  private async lostSoon(): Promise<boolean> {
    const gpu = this.backend as Partial<WebGPUBackend> | null;
    if (!gpu?.lost) return false;
    const lost = await Promise.race([gpu.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), LOSS_GRACE_MS))]);
    return lost;
  }

  servingVersion(): number {
    return this.service?.servingVersion() ?? 0;
  }

  keepVersionsFrom(version: number): void {
    if (!this.pinsLost) this.service?.keepVersionsFrom(version);
  }

  /** Set once a lost device was recovered from a checkpoint (ready()). */
  private pinsLost = false;

  /** Requests or score items as the service can answer them: unpinned once the pinned versions are lost. */
  private unpinned<T extends { version?: number }>(items: T[]): T[] {
    return this.pinsLost ? items.map(({ version: _, ...rest }) => rest as T) : items;
  }

  async generate(requests: PolicyRequest[], requestId?: string): Promise<PolicyReply[]> {
    const controller = new AbortController();
    if (requestId) this.aborts.set(requestId, controller);
    try {
      return await this.withRecovery((s) => s.generate(this.unpinned(requests), controller.signal));
    } finally {
      if (requestId) this.aborts.delete(requestId);
    }
  }

  /** Aborts can't cross the worker boundary as signals, so requests carry an id. */
  abort(requestId: string): void {
    this.aborts.get(requestId)?.abort(new DOMException('aborted', 'AbortError'));
  }

  async score(items: ScoreItem[], teacher: TeacherSource): Promise<number[][]> {
    return this.withRecovery((s) => s.score(this.unpinned(items), teacher));
  }

  async scoreTopK(items: ScoreItem[], policy: TeacherSource, k: number): Promise<ScoredTopK[]> {
    return this.withRecovery((s) => s.scoreTopK(this.unpinned(items), policy, k));
  }

  async train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    const result = await this.withRecovery((s) => s.train(items, onMicroBatch));
    // Checkpoint every finished step so a lost device costs at most the step in flight.
    this.lastCheckpoint = { files: await this.service!.exportAdapter(), version: result.version };
    return result;
  }

  async exportAdapter(): Promise<PeftFiles> {
    return this.withRecovery((s) => s.exportAdapter());
  }

  async restore(files: PeftFiles, version: number): Promise<void> {
    await this.withRecovery((s) => s.restore(files, version));
    this.lastCheckpoint = { files, version };
  }

  memory(): { allocated: number; peak: number } {
    return this.backend?.memory() ?? { allocated: 0, peak: 0 };
  }

  /** For tests and the lab's "simulate device loss" button: destroys the device. */
  simulateDeviceLoss(): void {
    const gpu = this.backend as Partial<WebGPUBackend>;
    if (!gpu.destroy) throw new Error('the policy runs on the CPU backend; there is no GPU device to lose');
    gpu.destroy();
  }
}
