/**
 * What a run was started with, as stored in the runs table and written to run files. The
 * preset is the method library's; the rest (scenario, backends, ...) belongs to the app and
 * is kept as plain JSON. Checked the same way on createRun and on import, so a config that
 * the store accepted always survives its own export.
 */
import { parsePreset, PresetError, type MethodPreset } from '../rl';
import { FieldError, int, mapOf, object, runChecker, str, type Checker } from '../rl/check';
import { ConfigTooDeepError, stripSecrets } from './secrets';
import { InvalidRunDataError } from './errors';

/** A model the run used, so that a reader of the file can fetch the same weights. */
export interface ModelRef {
  /** Hub id or local name, e.g. "Qwen/Qwen3-0.6B". */
  id: string;
  revision?: string;
  /** File name -> SHA-256 hex, where the app hashed what it loaded. */
  files?: Record<string, string>;
}

export interface RunConfig {
  preset: MethodPreset;
  /**
   * Role ("policy", "judge", "user") -> the model it loaded, for the run file's header. Named
   * apart from the app's own `models` settings, which storage keeps as opaque JSON.
   */
  modelRefs?: Record<string, ModelRef>;
  /** Name ("sampling", "problems", ...) -> seed. */
  seeds?: Record<string, number>;
  /** Anything else the app needs to repeat the run. Never credentials (see secrets.ts). */
  [setting: string]: unknown;
}

const name = str(256, 1);

/** A SHA-256 as 64 lower-case hex digits, the form sha256Hex writes. */
export const sha256Field: Checker<string> = (value, path) => {
  const hex = str(64, 64)(value, path);
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new FieldError(path, 'must be a SHA-256 as 64 lower-case hex digits');
  return hex;
};

const modelRef: Checker<ModelRef> = object(
  { id: str(1024, 1) },
  { revision: str(256), files: mapOf(str(1024, 1), sha256Field, 10_000) },
);
/** Checkers shared with the run file header, which repeats models and seeds for readers. */
export const modelsChecker = mapOf(name, modelRef, 64);
export const seedsChecker = mapOf(name, int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER), 64);

/** Field-level error from checking a config; `field` is relative to the config. */
export class RunConfigError extends InvalidRunDataError {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`run config field "${field}" ${problem}`);
  }
}

/**
 * Checks a run config and returns a copy without secret-named keys (API keys belong in the
 * settings table). Unknown app settings are kept as JSON.
 *
 * @throws RunConfigError naming the first bad field
 */
export function parseRunConfig(value: unknown): RunConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RunConfigError('(root)', 'must be a JSON object');
  let copy: Record<string, unknown>;
  try {
    copy = stripSecrets(value as Record<string, unknown>);
  } catch (e) {
    if (e instanceof ConfigTooDeepError) throw new RunConfigError(e.path, e.message);
    throw e;
  }
  if (!Object.hasOwn(copy, 'preset')) throw new RunConfigError('preset', 'is missing; every run needs its method preset');
  try {
    copy.preset = parsePreset(copy.preset);
  } catch (e) {
    if (e instanceof PresetError) throw new RunConfigError(`preset.${e.field}`, e.message.replace(/^preset field "[^"]*" /, ''));
    throw e;
  }
  const check = <T>(key: string, checker: Checker<T>) => {
    if (copy[key] === undefined) return;
    copy[key] = runChecker(checker, copy[key], (e: FieldError) => new RunConfigError(`${key}${e.path ? `.${e.path}` : ''}`, e.problem));
  };
  check('modelRefs', modelsChecker);
  check('seeds', seedsChecker);
  return copy as RunConfig;
}
