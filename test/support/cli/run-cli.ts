import { main, type MainOptions } from '../../../src/cli/main';

/** Runs `nextstate ARGV...` in this process, collecting what it prints to stdout and stderr. */
export function runCli(...argv: string[]) {
  return runCliWith({}, ...argv);
}

/** As runCli, with `o` (stderr taken for a terminal or not: progress lines go only to one). */
export async function runCliWith(o: MainOptions, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (l) => out.push(l),
    (l) => err.push(l),
    o,
  );
  return { code, out, err };
}
