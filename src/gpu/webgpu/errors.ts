import { EngineError } from '../errors';

/**
 * WebGPU rejected a kernel, a binding or a buffer: a bug in the engine (or an adapter limit it
 * did not check), never a user error. The message carries WebGPU's own text and the batch's ops.
 */
export class WebGPUValidationError extends EngineError {}

/** A tensor from another backend (or one already disposed) reached the WebGPU backend. */
export class ForeignTensorError extends EngineError {}
