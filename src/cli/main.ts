/**
 * `nextstate`: the engine and the run loop from a terminal. Every error ends as one line on
 * stderr and a non-zero exit code.
 */
import { UsageError } from './args';
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

type Command = (argv: string[], out: (line: string) => void) => Promise<void>;

const COMMANDS: Record<string, { run: Command; usage: string }> = {
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

export function help(): string {
  return ['usage:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

export async function main(
  argv: string[],
  out: (line: string) => void = (l) => console.log(l),
  err: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === 'help') {
    out(help());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    err(`nextstate: unknown command "${name}"\n${help()}`);
    return 2;
  }
  try {
    await cmd.run(rest, out);
    return 0;
  } catch (e) {
    const msg = (e as Error).message?.split('\n')[0] ?? String(e);
    err(`nextstate ${name}: ${msg}`);
    if (e instanceof UsageError) err(`usage: ${cmd.usage}`);
    return e instanceof UsageError ? 2 : 1;
  }
}
