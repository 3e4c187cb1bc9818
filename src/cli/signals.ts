/**
 * SIGINT (Ctrl-C) and SIGTERM stop long work at its next safe point instead of killing it, so
 * that what it writes (a run file) is complete; the command then exits as a signal-killed
 * process would, 128 + the signal's number (130, 143), so shells and schedulers see it stopped.
 */
import { constants } from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** How a process stopped by `signal` exits: 128 + the signal's number, as a shell reports it. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/** The command was stopped by a signal; main exits with `exitCode` and this one line. */
export class Interrupted extends Error {
  readonly exitCode: number;
  constructor(
    readonly signal: StopSignal,
    message: string,
  ) {
    super(message);
    this.name = 'Interrupted';
    this.exitCode = signalExitCode(signal);
  }
}

/**
 * Calls `stop` on the first SIGINT or SIGTERM while `work` runs, and says which one came.
 * Only the first is caught: a second Ctrl-C gets the default action and ends a run that does
 * not stop, as people expect of a second Ctrl-C.
 */
export async function stoppable<T>(stop: (signal: StopSignal) => void, work: () => Promise<T>): Promise<{ value: T; signal?: StopSignal }> {
  let signal: StopSignal | undefined;
  const handlers = STOP_SIGNALS.map((s) => {
    const handler = () => {
      signal ??= s;
      for (const [other, h] of handlers) if (other !== s) process.off(other, h);
      stop(s);
    };
    process.once(s, handler);
    return [s, handler] as const;
  });
  try {
    const value = await work();
    return signal ? { value, signal } : { value };
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}
