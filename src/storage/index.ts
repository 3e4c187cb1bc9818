/**
 * Storage: runs in IndexedDB (Dexie) and run files. The database half runs in the page and,
 * with fake-indexeddb, in Node; the run-file half (readRunFile, inspectRunFile,
 * extractAdapter, the JSONL exports) needs no database and serves the CLI.
 */
export { RunStore } from './store';
export type {
  RunInfo,
  StoredRecord,
  RecordQuery,
  StoredAdapter,
  ResumePoint,
  BufferedRecords,
  StartupReport,
  RunStoreOptions,
  ImportWriter,
  ImportedRunMeta,
  WatchedRunMeta,
} from './store-types';
export { NextStateDB, DEFAULT_DB_NAME, SCHEMAS, SCHEMA_VERSION, RUN_STATUSES, type RunStatus, type WatchSource } from './db';
export { parseStoredConfig, StoredConfigError, type StoredConfig, type StorableConfig, type ModelRef } from './stored-config';
export type { Metric } from './metrics';
export type { RunSummary, EvaluationSummary } from './summary';
export {
  StorageError,
  RunNotFoundError,
  RunBusyError,
  ReadOnlyRunError,
  InvalidRunDataError,
  StorageFullError,
  RunFileError,
  type DeletableRun,
} from './errors';
export { storageStatus, requestPersistence, isQuotaError, type StorageStatus } from './quota';
export { stripSecrets, isSecretKey } from './secrets';
export {
  exportRun,
  exportRunStream,
  runFileStream,
  storeSource,
  memorySource,
  type RunFileSource,
  parseHeader,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  RUN_FILE_EXTENSION,
  APP_VERSION,
  type RunFileHeader,
  type RunFileAdapter,
  type RunFileIntegrity,
  type IntegrityStatus,
  headerDigest,
  type ExportOptions,
} from './runfile';
export { readRunFile, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINE_CHARS, type ReadOptions, type RunFileItem, type FileAdapter } from './reader';
export { importRun, inspectRunFile, extractAdapter, type ImportOptions, type RunFileInfo } from './import';
export type { ByteInput } from './streams';
export { trainingSamples, SampleJoiner, toJsonl, recordsJsonl, type TrainingSampleRow, type TrainingSamples } from './exports';
export {
  samplesAs,
  slimeSample,
  tinkerDatum,
  SampleShapeError,
  SAMPLE_FORMATS,
  type SampleFormat,
  type SlimeSample,
  type TinkerDatum,
  type TensorData,
} from './export-shapes';
export { copyRun, type CopyOptions } from './copy';
