#!/usr/bin/env node
// The `nextstate` command. The CLI is TypeScript, run through tsx's loader so that the same
// sources serve the page and Node without a separate build.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
