/**
 * What the store and the run file rely on in a run's config: a valid preset, the models and
 * seeds the header repeats, and no secrets. The whole config (scenario, roles, schedule, ...)
 * is runtime/run-config.ts, a layer above; storage keeps the rest as JSON it does not
 * read. Checked the same way on createRun and on import, so a config that the store accepted
 * always survives its own export.
 */
import { parsePreset, PresetError, type MethodPreset } from '../rl';
import { presetShape } from '../rl/presets';
import { checker, FieldError, int, mapOf, object, oneOf, runChecker, str, type Checker, type Infer } from '../base/check';
import { WEIGHT_FORMATS } from '../gpu/quant';
import { ConfigTooDeepError, stripSecrets } from './secrets';
import { InvalidRunDataError } from './errors';

/** A model the run used, so that a reader of the file can fetch the same weights. */
export type ModelRef = Infer<typeof modelRef>;

/**
 * What createRun takes: any object with the fields storage reads (their checker below is their one
 * definition). It has no index signature, so the app's own config interface is accepted as it is.
 */
export type StorableConfig = Infer<typeof storableConfig>;

/**
 * A config as storage keeps it: the fields it reads, checked, and the app's other fields as
 * JSON it does not read (never credentials, see secrets.ts).
 */
export type StoredConfig = StorableConfig & { [setting: string]: unknown };

const name = str(256, 1);

/** A SHA-256 as 64 lower-case hex digits, the form sha256Hex writes. */
const SHA256 = /^[0-9a-f]{64}$/;
export const sha256Field: Checker<string> = checker({ type: 'string', pattern: SHA256.source }, (value, path) => {
  const hex = str(64, 64)(value, path);
  if (!SHA256.test(hex)) throw new FieldError(path, 'must be a SHA-256 as 64 lower-case hex digits');
  return hex;
});

const modelRef = object(
  {
    /** Hub id or local name, e.g. "Qwen/Qwen3-0.6B". */
    id: str(1024, 1),
  },
  {
    revision: str(256),
    /** File name -> SHA-256 hex, where the app hashed what it loaded. */
    files: mapOf(str(1024, 1), sha256Field, 10_000),
    /** How its weight matrices were stored on the device (absent in files from before formats). */
    weightFormat: oneOf(...WEIGHT_FORMATS),
  },
);
/** Checkers shared with the run file header, which repeats models and seeds for readers. */
export const modelsChecker = mapOf(name, modelRef, 64);
export const seedsChecker = mapOf(name, int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER), 64);

/** The preset, with parsePreset's rules between fields; its own error becomes a field of the config. */
const presetField: Checker<MethodPreset> = checker(presetShape.schema, (value, path) => {
  try {
    return parsePreset(value);
  } catch (e) {
    if (e instanceof PresetError) throw new FieldError(`${path}.${e.field}`, e.message.replace(/^preset field "[^"]*" /, ''));
    throw e;
  }
});

/** The fields storage reads of a config (StorableConfig). */
const storableConfig = object(
  { preset: presetField },
  {
    /**
     * Role ("policy", "judge", "user") -> the model it loaded, for the run file's header. Named
     * apart from the app's own `models` settings, which storage does not read.
     */
    modelRefs: modelsChecker,
    /** Name ("run", "sampling", ...) -> seed. */
    seeds: seedsChecker,
  },
);
const STORABLE_KEYS = Object.keys(storableConfig.schema.properties ?? {});

/** Field-level error from checking what storage reads of a config; `field` is relative to the config. */
export class StoredConfigError extends InvalidRunDataError {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`run config field "${field}" ${problem}`);
  }
}

/**
 * Checks what storage reads of a run config and returns a copy without secret-named keys (API
 * keys belong in the settings table). The app's other fields are kept as JSON.
 *
 * @throws StoredConfigError naming the first bad field
 */
export function parseStoredConfig(value: unknown): StoredConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new StoredConfigError('(root)', 'must be a JSON object');
  let copy: Record<string, unknown>;
  try {
    copy = stripSecrets(value as Record<string, unknown>);
  } catch (e) {
    if (e instanceof ConfigTooDeepError) throw new StoredConfigError(e.path, e.message);
    throw e;
  }
  if (!Object.hasOwn(copy, 'preset')) throw new StoredConfigError('preset', 'is missing; every run needs its method preset');
  // Only the fields storage reads are checked; the others stay as they are, in their places.
  const read = Object.fromEntries(STORABLE_KEYS.filter((k) => Object.hasOwn(copy, k)).map((k) => [k, copy[k]]));
  const checked = runChecker(storableConfig, read, (e) => new StoredConfigError(e.path, e.problem));
  return { ...copy, ...checked };
}
