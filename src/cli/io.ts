/**
 * Where a command's lines go. stdout carries only the data the command promises (`--json`
 * lines, a config, a table), so that `nextstate ... > file` and pipes get nothing else;
 * what happened and how far along it is goes to stderr.
 */
export interface CliIo {
  /** The command's data: stdout. */
  out(line: string): void;
  /** What the command did (files written, the address it serves on): stderr, unless --quiet. */
  note(line: string): void;
  /** Lines of long work as it goes: stderr when a person watches it (a terminal), unless --quiet. */
  progress(line: string): void;
}

export interface IoOptions {
  quiet?: boolean;
  /** Whether stderr is a terminal; progress is written only to one, never into a log file. */
  stderrIsTTY?: boolean;
}

const ignore = () => {};

export function cliIo(out: (line: string) => void, err: (line: string) => void, o: IoOptions = {}): CliIo {
  return {
    out,
    note: o.quiet ? ignore : err,
    progress: o.quiet || !o.stderrIsTTY ? ignore : err,
  };
}

/**
 * " (about 3 min 05 s left)" after `done` of `total` units begun at `startedMs`, by the mean
 * pace so far; nothing before the first unit or after the last.
 */
export function timeLeft(startedMs: number, done: number, total: number, nowMs = Date.now()): string {
  if (done <= 0 || done >= total) return '';
  const s = Math.round((((nowMs - startedMs) / done) * (total - done)) / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  const text =
    s >= 3600 ? `${Math.floor(s / 3600)} h ${two(Math.floor((s % 3600) / 60))} min` : s >= 60 ? `${Math.floor(s / 60)} min ${two(s % 60)} s` : `${s} s`;
  return ` (about ${text} left)`;
}
