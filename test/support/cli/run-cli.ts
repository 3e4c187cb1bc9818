import { main } from '../../../src/cli/main';

/** Runs `nextstate ARGV...` in this process, collecting what it prints to stdout and stderr. */
export async function runCli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out, err };
}
