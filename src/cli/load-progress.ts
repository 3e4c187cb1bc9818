/**
 * A model load's progress as lines for a person at a terminal: each file's bytes and speed as
 * it downloads, then how much of the weights is stored. Work that finishes within one interval
 * prints nothing, so a bundled model or a cached file loads as quietly as before.
 */
import type { ConvertProgress, LoadProgress } from '../gpu/load';
import type { FileProgress } from '../models/source';
import { formatBytes } from '../base/bytes';
import { timeLeft, type CliIo } from './io';

/** The least time between two lines of one piece of work: often enough to see it move, seldom enough to read. */
export const PROGRESS_INTERVAL_MS = 1000;

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function speed(bytes: number, ms: number): string {
  return ms > 0 ? `${formatBytes((bytes * 1000) / ms)}/s` : 'n/a';
}

/**
 * The load hooks for `model` (a folder or hub id, as the person typed it) that write to `line`;
 * `line` is the command's io.progress, which writes only to a terminal and never with --quiet.
 */
export function loadProgress(line: (text: string) => void, model: string, now: () => number = Date.now, everyMs = PROGRESS_INTERVAL_MS): LoadProgress {
  // One piece of work at a time: the loader reads its files one after another, then converts.
  let work: { key: string; started: number; shown: number; printed: boolean } | null = null;
  /** Whether a line is due for `key` now; begins its clock at its first event. */
  const due = (key: string): boolean => {
    const t = now();
    if (work?.key !== key) work = { key, started: t, shown: t, printed: false };
    if (t - work.shown < everyMs) return false;
    work.shown = t;
    work.printed = true;
    return true;
  };

  const onProgress = (p: FileProgress) => {
    // A file from the cache or a folder is read, not downloaded: there is nothing to wait for.
    if (p.fromCache) return;
    const key = `file ${p.file}`;
    const finished = p.total !== null && p.loaded >= p.total;
    if (finished) {
      if (work?.key === key && work.printed) {
        line(`downloaded ${p.file} of ${model}: ${formatBytes(p.loaded)} in ${seconds(now() - work.started)} (${speed(p.loaded, now() - work.started)})`);
      }
      work = null;
      return;
    }
    if (!due(key)) return;
    const elapsed = now() - work!.started;
    const of = p.total !== null ? ` of ${formatBytes(p.total)} (${Math.floor((100 * p.loaded) / p.total)}%)` : '';
    const left = p.total !== null ? timeLeft(work!.started, p.loaded, p.total, now()) : '';
    line(`downloading ${p.file} of ${model}: ${formatBytes(p.loaded)}${of}, ${speed(p.loaded, elapsed)}${left}`);
  };

  const onConvert = (p: ConvertProgress) => {
    const key = `convert ${p.format}`;
    if (p.done >= p.total) {
      if (work?.key === key && work.printed) line(`stored the weights of ${model} as ${p.format} in ${seconds(now() - work.started)}`);
      work = null;
      return;
    }
    if (!due(key)) return;
    line(`storing the weights of ${model} as ${p.format}: ${Math.floor((100 * p.done) / p.total)}%${timeLeft(work!.started, p.done, p.total, now())}`);
  };

  return { onProgress, onConvert };
}

/** Load hooks by model for a command's run and serve services: each model's lines on its io.progress. */
export function progressFor(io: Pick<CliIo, 'progress'>): (model: string) => LoadProgress {
  return (model) => loadProgress(io.progress, model);
}
