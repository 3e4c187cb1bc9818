#!/usr/bin/env node
// The `nextstate` command. An installed package runs the compiled CLI (dist-cli/, built by
// `npm pack`'s prepack step); the repository, which has no dist-cli/ (postpack removes it, so it
// never goes stale), runs the TypeScript sources through tsx's loader, so the same sources serve
// the page and Node without a build step.
import { existsSync } from 'node:fs';

// A reader that stops early (`nextstate inspect f | head -1`) closes the pipe: that ends the
// command quietly, as SIGPIPE ends other tools, instead of as an uncaught EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const compiled = new URL('../dist-cli/nextstate.mjs', import.meta.url);
let cli;
if (existsSync(compiled)) {
  cli = await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const [{ main }, { terminalText }] = await Promise.all([import('../src/cli/main.ts'), import('../src/cli/terminal.ts')]);
  cli = { main, terminalText };
}
// Output quotes files and model text: no escape sequence in them reaches the terminal.
process.exitCode = await cli.main(
  process.argv.slice(2),
  (line) => console.log(cli.terminalText(line)),
  (line) => console.error(cli.terminalText(line)),
);
