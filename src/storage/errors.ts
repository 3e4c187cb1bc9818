/**
 * One error class per storage failure, each with a message that says what to do. Callers
 * branch on the class (the run loop pauses a run on StorageFullError); people read the message.
 */
import { formatBytes } from '../base/bytes';

export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No run with this id (never created, deleted, or an import that did not finish). */
export class RunNotFoundError extends StorageError {
  constructor(readonly runId: string) {
    super(`No run with id "${runId}" in this browser's storage. It may have been deleted; reload the run list.`);
  }
}

/** Another tab (or another run loop in this one) is driving the run. */
export class RunBusyError extends StorageError {
  constructor(readonly runId: string) {
    super(`Run "${runId}" is already running in another tab of Next-State Lab. Switch to that tab, or close it and try again.`);
  }
}

/**
 * Imported runs are a record of someone else's work, and a watched run is the server's: their
 * log and adapters stay as they came.
 */
export class ReadOnlyRunError extends StorageError {
  constructor(
    readonly runId: string,
    action: string,
    watched = false,
  ) {
    super(
      `Run "${runId}" ${watched ? 'is kept from a server it watched' : 'was imported from a file'} and is read-only, so it cannot ${action}. ` +
        `Start a new run (its label and notes can still be edited).`,
    );
  }
}

/** A record or config handed to the store does not have the shape the run file format needs. */
export class InvalidRunDataError extends StorageError {}

/** A run that can be deleted to make room, with the bytes it holds. */
export interface DeletableRun {
  id: string;
  label: string;
  bytes: number;
}

/**
 * The browser refused a write because its storage quota is used up. Nothing of the failed
 * write was kept and nothing earlier was lost: the caller pauses the run, the person frees
 * space, and the same records can be appended again.
 */
export class StorageFullError extends StorageError {
  constructor(
    readonly runId: string | null,
    runLabel: string | null,
    /** Bytes the failed write needed (an estimate of what must be freed at least). */
    readonly neededBytes: number,
    /** Other runs, largest first. */
    readonly deletable: readonly DeletableRun[],
    readonly usage: number | null,
    readonly quota: number | null,
    cause: unknown,
  ) {
    const used = usage !== null && quota !== null ? ` (${formatBytes(usage)} of ${formatBytes(quota)} used)` : '';
    const what = runId === null ? 'this write' : `run "${runLabel ?? runId}"`;
    const advice =
      deletable.length > 0
        ? `Free space by deleting runs you no longer need, largest first: ${deletable
            .map((r) => `"${r.label}" (${formatBytes(r.bytes)})`)
            .join(', ')}. Export a run to a file first to keep it.`
        : 'There is no other run to delete: export this run to a file, delete it, and import it again, or free space used by other sites in the browser settings.';
    super(
      `Browser storage is full${used}: saving ${what} needs about ${formatBytes(neededBytes)} more. ` +
        `Nothing was lost: every record saved before this write is intact, and the run should be paused. ${advice}`,
      { cause },
    );
  }
}

/**
 * A run file is damaged, too large, from a newer app, or not a run file. `line` is 1-based
 * (line 1 is the header); `field` names the offending field where one is known.
 */
export class RunFileError extends StorageError {
  constructor(
    message: string,
    readonly line: number | null = null,
    readonly field: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
