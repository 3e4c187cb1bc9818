/**
 * `nextstate`: the engine and the run loop from a terminal. Exit codes follow POSIX tools: 0 done,
 * 1 a runtime error (one line on stderr), 2 a usage error, 128 + n stopped by signal n.
 */
import { UsageError } from './args';
import { cliIo, type CliIo } from './io';
import { Interrupted } from './signals';
import { APP_VERSION } from '../storage/runfile';
import { generateCommand, usage as generateUsage } from './generate';
import { scoreCommand, usage as scoreUsage } from './score';
import { trainCommand, usage as trainUsage } from './train';
import { runCommand, usage as runUsage } from './run';
import { inspectCommand, usage as inspectUsage } from './inspect';
import { exportCommand, usage as exportUsage } from './export';
import { reproduceCommand, usage as reproduceUsage } from './reproduce';
import { makeDemoModelCommand, usage as makeDemoModelUsage } from './make-demo-model';
import { planCommand, usage as planUsage } from './plan';
import { serveCommand, usage as serveUsage } from './serve';

type Command = (argv: string[], io: CliIo) => Promise<void>;

export const COMMANDS: Record<string, { run: Command; usage: string }> = {
  generate: { run: generateCommand, usage: generateUsage },
  score: { run: scoreCommand, usage: scoreUsage },
  train: { run: trainCommand, usage: trainUsage },
  plan: { run: planCommand, usage: planUsage },
  run: { run: runCommand, usage: runUsage },
  serve: { run: serveCommand, usage: serveUsage },
  inspect: { run: inspectCommand, usage: inspectUsage },
  export: { run: exportCommand, usage: exportUsage },
  reproduce: { run: reproduceCommand, usage: reproduceUsage },
  'make-demo-model': { run: makeDemoModelCommand, usage: makeDemoModelUsage },
};

const GLOBAL = `every command takes -h/--help (its usage) and -q/--quiet (no status or progress lines on stderr)`;

/** Every command's usage: `nextstate --help`. */
export function help(): string {
  return ['usage:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`), GLOBAL].join('\n');
}

/** What a bare `nextstate` or a mistyped command gets: short, with where to read more. */
export function shortUsage(): string {
  return [
    'usage: nextstate COMMAND [OPTIONS]',
    `commands: ${Object.keys(COMMANDS).join(', ')}`,
    '`nextstate --help` shows every command, `nextstate COMMAND --help` one; `nextstate --version` the version',
  ].join('\n');
}

/**
 * The flags every command takes, taken out of argv before the command parses it. Only tokens
 * before `--` count, so a positional after it may be literally "-h".
 */
function globalFlags(argv: string[]): { rest: string[]; help: boolean; quiet: boolean } {
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length;
  const flags = { help: false, quiet: false };
  const rest = argv.filter((a, i) => {
    if (i >= end) return true;
    if (a === '-h' || a === '--help') flags.help = true;
    else if (a === '-q' || a === '--quiet') flags.quiet = true;
    else return true;
    return false;
  });
  return { rest, ...flags };
}

export interface MainOptions {
  /** Whether stderr is a terminal, where progress lines are shown; process.stderr's by default. */
  stderrIsTTY?: boolean;
}

export async function main(
  argv: string[],
  out: (line: string) => void = (l) => console.log(l),
  err: (line: string) => void = (l) => console.error(l),
  o: MainOptions = {},
): Promise<number> {
  const flags = globalFlags(argv);
  const [name, ...rest] = flags.rest;
  if (name === '--version') {
    out(APP_VERSION);
    return 0;
  }
  // `nextstate help [COMMAND]` is `nextstate [COMMAND] --help`.
  if (name === 'help') return main([...rest.slice(0, 1), '--help'], out, err, o);
  if (!name) {
    if (flags.help) {
      out(help());
      return 0;
    }
    err(shortUsage());
    return 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    err(`nextstate: unknown command "${name}"\n${shortUsage()}`);
    return 2;
  }
  if (flags.help) {
    out(cmd.usage);
    return 0;
  }
  try {
    await cmd.run(rest, cliIo(out, err, { quiet: flags.quiet, stderrIsTTY: o.stderrIsTTY ?? process.stderr.isTTY === true }));
    return 0;
  } catch (e) {
    const msg = (e as Error).message?.split('\n')[0] ?? String(e);
    err(`nextstate ${name}: ${msg}`);
    if (e instanceof Interrupted) return e.exitCode;
    if (e instanceof UsageError) err(`usage: ${cmd.usage}`);
    return e instanceof UsageError ? 2 : 1;
  }
}
