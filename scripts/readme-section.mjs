#!/usr/bin/env node
// Replaces the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` in README.md with a
// generated file, so that figures in the README are made by the commands that measured them:
//   node scripts/readme-section.mjs reproduction docs/reproduction/reproduction.md
import { readFileSync, writeFileSync } from 'node:fs';

const [name, file, readme = 'README.md'] = process.argv.slice(2);
if (!name || !file) {
  console.error('usage: node scripts/readme-section.mjs NAME GENERATED_FILE [README.md]');
  process.exit(2);
}
const start = `<!-- ${name}:start -->`;
const end = `<!-- ${name}:end -->`;
const text = readFileSync(readme, 'utf8');
const a = text.indexOf(start);
const b = text.indexOf(end);
if (a < 0 || b < a) {
  console.error(`${readme} has no ${start} ... ${end} section; add the two markers where the text belongs.`);
  process.exit(1);
}
const body = readFileSync(file, 'utf8').trim();
writeFileSync(readme, `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`);
console.log(`${readme}: section "${name}" now holds ${file}`);
