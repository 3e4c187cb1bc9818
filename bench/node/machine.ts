/** The machine a run measured, as far as Node can tell; the browser adds its own part. */
import { cpus, loadavg, totalmem } from 'node:os';
import { round } from '../lib/stats';
import { loud } from './log';

export function machineInfo() {
  const cores = cpus();
  return {
    cpuCores: cores.length,
    cpuModel: cores[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

/**
 * The 1-minute load average. Its value when the run starts is other processes' recent work (a
 * test run, a build); above half the cores, they compete with the run and every figure is
 * slower than the machine can do, so the report says so. Samples during the run include the
 * run's own threads (Chromium's GPU process and SwiftShader use several), so they only show
 * how busy the machine was.
 */
export class LoadWatch {
  private readonly samples: number[] = [];
  private readonly timer = setInterval(() => this.samples.push(loadavg()[0]), 15_000).unref();
  private readonly atStart = loadavg()[0];

  stop(): { loadAverage1m: { atStart: number; maxDuringRun: number }; contended: boolean } {
    clearInterval(this.timer);
    const cores = cpus().length;
    const contended = this.atStart > cores / 2;
    if (contended) {
      loud(
        `the load average was ${this.atStart.toFixed(1)} on ${cores} cores when the run started: other processes competed with it, so its figures understate the machine`,
      );
    }
    const maxDuringRun = Math.max(this.atStart, ...this.samples);
    return { loadAverage1m: { atStart: round(this.atStart), maxDuringRun: round(maxDuringRun) }, contended };
  }
}
