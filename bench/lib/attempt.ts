import type { Maybe } from './types';

/** An error as a skip reason: one failing runner must not lose the other runners' figures. */
export async function attempt<T>(what: string, fn: () => Promise<T>, log: (line: string) => void): Promise<Maybe<T>> {
  try {
    return await fn();
  } catch (e) {
    log(`${what} failed: ${(e as Error).stack ?? e}`);
    return { skipped: `${what} failed: ${(e as Error).message}` };
  }
}
