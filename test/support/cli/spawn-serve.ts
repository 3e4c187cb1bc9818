/**
 * `nextstate serve` in a second process, as a person runs it: light to import (no model code),
 * so the browser tests' commands (serve-commands.ts) can use it from Vitest's config too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface ServeProcess {
  child: ChildProcess;
  /** The OpenAI base URL it listens on (…/v1). */
  url: string;
  /** Resolves with the exit code, or null when a signal killed it. */
  exited: Promise<number | null>;
}

const bin = resolve(import.meta.dirname, '../../../bin/nextstate.mjs');

/** `nextstate serve ARGS --port 0 --json` in a second process, once it listens. */
export async function spawnServe(args: string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', ...args, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(signal ? null : code)));
  const url = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const e = JSON.parse(line);
      if (e.type === 'listening') res(e.url);
    });
    child.on('exit', () => rej(new Error('the server exited before it listened')));
  });
  return { child, url, exited };
}
