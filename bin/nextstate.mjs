#!/usr/bin/env node
// The `nextstate` command. The CLI is TypeScript, run through tsx's loader so that the same
// sources serve the page and Node without a separate build.
import { register } from 'tsx/esm/api';

// A reader that stops early (`nextstate inspect f | head -1`) closes the pipe: that ends the
// command quietly, as SIGPIPE ends other tools, instead of as an uncaught EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

register();
const { main } = await import('../src/cli/main.ts');
const { terminalText } = await import('../src/cli/terminal.ts');
// Output quotes files and model text: no escape sequence in them reaches the terminal.
process.exitCode = await main(
  process.argv.slice(2),
  (line) => console.log(terminalText(line)),
  (line) => console.error(terminalText(line)),
);
