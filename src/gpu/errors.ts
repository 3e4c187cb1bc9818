/**
 * One error class per failure of the engine, each with a message that says what to do
 * (web-llm's habit). Callers branch on the class; people read the message.
 */
import { EngineError } from '../models/errors';

// The model files' failures live with them (src/models/errors.ts); every engine error extends the same EngineError.
export { EngineError, ModelConfigError, ModelSourceError, UnsupportedArchitectureError, WeightsError } from '../models/errors';

/** The browser has no WebGPU, or the adapter lacks what the model needs. */
export class WebGPUUnavailableError extends EngineError {}

/** The GPU device was lost (driver reset, tab backgrounded too long, out of memory). */
export class DeviceLostError extends EngineError {}

/** A prompt cannot continue the ids it was given (PromptOptions.continues). */
export class PromptContinuationError extends EngineError {}

/** A request exceeds what the loaded model or the engine's buffers allow. */
export class EngineLimitError extends EngineError {}

/** An EngineLimitError, also as a worker hands it over (by name: comlink rebuilds errors as plain Errors). */
export function isEngineLimit(e: unknown): boolean {
  return e instanceof EngineLimitError || (e as { name?: unknown } | null)?.name === 'EngineLimitError';
}

/** Full fine-tuning of this model needs more memory (or larger buffers) than the device has: train LoRA instead. */
export class FullTrainingMemoryError extends EngineLimitError {}
