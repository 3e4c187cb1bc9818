// Preloaded into a measured `nextstate` process (node --import): at exit, its peak resident set
// size in bytes goes to the file NEXTSTATE_PEAK_RSS_FILE names, for bench/node/hostile.ts.
import { writeFileSync } from 'node:fs';

const file = process.env.NEXTSTATE_PEAK_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
