/**
 * What the browser said when the lab asked it to keep this origin's storage (persist()), as
 * the settings table remembers it across reloads. Read back through persistenceAnswer, since
 * a setting is whatever an older app or a person's devtools left there.
 */
import { MAX_TIME_MS } from '../../base/check';

export const PERSISTENCE_KEY = 'storage.persistence';

export interface PersistenceAnswer {
  granted: boolean;
  /** When it was asked (ms since the epoch): the start of the last run. */
  at: number;
}

export function persistenceAnswer(saved: unknown): PersistenceAnswer | null {
  const s = saved as Partial<PersistenceAnswer> | null | undefined;
  return typeof s?.granted === 'boolean' && typeof s.at === 'number' && s.at >= 0 && s.at <= MAX_TIME_MS ? { granted: s.granted, at: s.at } : null;
}
