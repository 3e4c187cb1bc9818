/** Progress lines go to stderr: stdout carries only the JSON result. */
const t0 = Date.now();

export function log(line: string): void {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
}

/** A line nobody should miss in a long log. */
export function loud(line: string): void {
  process.stderr.write(`\n!!! ${line}\n\n`);
}
