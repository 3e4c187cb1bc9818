/**
 * Why a transformers.js model did not load, one class per thing the person can do something about.
 * Every message is one line and ends with what to do.
 */

export class TransformersLoadError extends Error {
  override name = 'TransformersLoadError';
}

/** The folder or hub repository has no ONNX weights in transformers.js's layout. */
export class NoOnnxWeightsError extends TransformersLoadError {
  override name = 'NoOnnxWeightsError';
  constructor(model: string, wanted: string) {
    super(
      `${model} has no ${wanted}: transformers.js runs ONNX weights under onnx/ (model.onnx, model_q4.onnx, model_quantized.onnx, ...). ` +
        'Pick a folder exported for transformers.js (an onnx-community repository, or Optimum\u2019s export), or run this model on the engine instead.',
    );
  }
}

/** config.json is missing, not JSON, or not a model config transformers.js knows. */
export class BadModelConfigError extends TransformersLoadError {
  override name = 'BadModelConfigError';
  constructor(model: string, problem: string) {
    super(`${model}/config.json ${problem}: download the model folder again, or fix its config.json.`);
  }
}

/** tokenizer.json or tokenizer_config.json is missing or damaged. */
export class BadTokenizerError extends TransformersLoadError {
  override name = 'BadTokenizerError';
  constructor(model: string, problem: string) {
    super(`${model}: its tokenizer did not load (${problem}); the folder needs tokenizer.json and tokenizer_config.json.`);
  }
}

/** An error's message on one line, without the library's stack or its line breaks. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
