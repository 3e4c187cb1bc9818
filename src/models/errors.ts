/**
 * The engine's base error and the failures of its model files: a config.json, a weights file or
 * a download the engine cannot use. src/gpu/errors.ts re-exports these beside the engine's own.
 */
export class EngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** config.json names an architecture the engine does not implement. */
export class UnsupportedArchitectureError extends EngineError {}

/** config.json is missing, unparseable or lacks a field the engine needs. */
export class ModelConfigError extends EngineError {}

/** A weights file is truncated, has a bad header, or a tensor has the wrong name/shape/dtype. */
export class WeightsError extends EngineError {}

/** A model file could not be fetched or read. */
export class ModelSourceError extends EngineError {}
