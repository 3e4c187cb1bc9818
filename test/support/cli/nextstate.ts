import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const bin = resolve(__dirname, '../../../bin/nextstate.mjs');

export interface Exit {
  code: number | null;
  /** The signal that killed it, when one did (kill -9). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The real `nextstate ARGV...` in a child. `onLine(line, kill)` sees each stdout line as it
 * comes; `onSpawn(kill)` gets the way to signal it at once.
 */
export function nextstate(
  args: string[],
  onLine?: (line: string, kill: (signal: NodeJS.Signals) => void) => void,
  onSpawn?: (kill: (signal: NodeJS.Signals) => void) => void,
): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = (s: NodeJS.Signals) => void child.kill(s);
    onSpawn?.(kill);
    let stdout = '';
    let stderr = '';
    let seen = 0;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const lines = stdout.split('\n');
      for (; seen < lines.length - 1; seen++) onLine?.(lines[seen], kill);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}
