#!/usr/bin/env node
// Compiles the `nextstate` command to one JavaScript file, dist-cli/nextstate.mjs, for the
// packed package (`npm pack` runs this as prepack): an installed package has no tsx, which is
// only a devDependency. bin/nextstate.mjs loads this file when it exists.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// Only what an installed package has stays an import; everything else (devDependencies the CLI
// uses included) is compiled in. `webgpu` is loaded only for --backend webgpu, and says how to
// install it when it is missing.
const external = [...Object.keys(pkg.dependencies ?? {}), 'webgpu'];

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${pkg.engines.node.replace(/^>=\s*/, '').split('.')[0]}`,
  external,
  logLevel: 'warning',
};

await build({
  ...common,
  stdin: {
    contents: "export { main } from './main'; export { terminalText } from './terminal';",
    resolveDir: new URL('../src/cli', import.meta.url).pathname,
    sourcefile: 'nextstate.ts',
    loader: 'ts',
  },
  outfile: new URL('../dist-cli/nextstate.mjs', import.meta.url).pathname,
});
// serve's trainer thread runs a file of its own, beside the command (src/workers/node/trainer-thread.ts).
await build({
  ...common,
  entryPoints: [new URL('../src/workers/node/trainer.worker.ts', import.meta.url).pathname],
  outfile: new URL('../dist-cli/trainer.worker.mjs', import.meta.url).pathname,
});
