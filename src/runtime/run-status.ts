/**
 * RUN.nsrun.status: what a live run is doing, beside its run file. A training step on the CPU
 * holds the process for minutes, and nothing is written while it does, so the status is written
 * before the step starts (with the run file brought up to date) and again once it is committed;
 * `nextstate inspect` reads it, and tells a status left by a process that is gone (kill -9).
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export const statusPath = (file: string) => `${file}.status`;

export interface LiveStatus {
  /** The process that writes the run. */
  pid: number;
  updated: number;
  /** The step being trained, since when and on how many samples; null between steps. */
  training: { step: number; samples: number; since: number } | null;
}

/** Replaces the status by a rename, so a reader sees the old one or the new one whole. */
export function writeLiveStatus(file: string, status: LiveStatus): void {
  const tmp = `${statusPath(file)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(status)}\n`);
  renameSync(tmp, statusPath(file));
}

export function removeLiveStatus(file: string): void {
  rmSync(statusPath(file), { force: true });
}

/** The status beside `file`, or null where there is none or it cannot be read as one. */
export function readLiveStatus(file: string): LiveStatus | null {
  if (!existsSync(statusPath(file))) return null;
  try {
    const s = JSON.parse(readFileSync(statusPath(file), 'utf8')) as LiveStatus;
    return Number.isInteger(s.pid) && Number.isFinite(s.updated) ? s : null;
  } catch {
    return null;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The status in one line, for inspect. */
export function describeLiveStatus(s: LiveStatus, alive: (pid: number) => boolean = processAlive): string {
  const when = (t: number) => new Date(t).toISOString();
  const doing = s.training
    ? `training step ${s.training.step} on ${s.training.samples} samples since ${when(s.training.since)}`
    : `between steps (updated ${when(s.updated)})`;
  return alive(s.pid) ? `live: process ${s.pid} is ${doing}` : `live: process ${s.pid} is gone; it was ${doing} (continue the run with --resume)`;
}
