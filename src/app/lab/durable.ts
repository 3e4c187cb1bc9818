/**
 * Storage writes that wait out a full disk: the run pauses and shows why, and each failed write
 * is tried again once the person has made room, so no record is dropped.
 */
import { StorageFullError } from '../../storage/index';

export class DurableWrites {
  private waiters: (() => void)[] = [];

  /** `onFull` hears the storage's message when a write finds the disk full. */
  constructor(private readonly onFull: (message: string) => void) {}

  /** Runs `write` until it succeeds; any error but a full disk is thrown. */
  async run<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await write();
      } catch (e) {
        if (!(e instanceof StorageFullError)) throw e;
        this.onFull(e.message);
        await new Promise<void>((r) => this.waiters.push(r));
      }
    }
  }

  /** Writes waiting for room, now. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Tries the waiting writes again (after the person freed space, or to let a stop finish). */
  retry(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
