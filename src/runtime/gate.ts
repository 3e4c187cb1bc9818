/** Small concurrency primitives for the run loop: a pause gate and a counting semaphore. */

export class PauseGate {
  private waiters: (() => void)[] = [];
  private paused = false;

  get isPaused(): boolean {
    return this.paused;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves at once when running, else when resumed. */
  wait(): Promise<void> {
    return this.paused ? new Promise((r) => this.waiters.push(r)) : Promise.resolve();
  }
}

/** Bounds work in flight: acquire waits while `limit` permits are out (back-pressure). */
export class Semaphore {
  private out = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get inUse(): number {
    return this.out;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  async acquire(): Promise<void> {
    if (this.out < this.limit) {
      this.out++;
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.out--;
  }
}
