/**
 * Two `nextstate reproduce --wishes` experiments of the same combinations and seeds, one arm each
 * (two OPD terms, two models), paired by seed (wishComparison in src/cli/reproduce-report.ts). The
 * child the demo model was tuned on (the config's own) is left out of the pooled row.
 *
 *   node --import tsx scripts/compare-wishes.ts A/wishes.json B/wishes.json "label A" "label B" OUT
 *
 * writes OUT.json (both experiments' runs and the comparison) and OUT.md (its table).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { wishComparison, wishComparisonMarkdown, type RunScores } from '../src/cli/reproduce-report';

interface WishesFile {
  command: string;
  policy: string;
  scenario: { subject: string; name: string; favourite: string };
  arm: string;
  step: number;
  runs: RunScores[];
}

const [fileA, fileB, labelA, labelB, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: node --import tsx scripts/compare-wishes.ts A/wishes.json B/wishes.json "label A" "label B" OUT');
  process.exit(2);
}
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as WishesFile;
const [a, b] = [read(fileA), read(fileB)];
if (a.step !== b.step) throw new Error(`${fileA} reports step ${a.step} and ${fileB} step ${b.step}; compare experiments of the same length`);
const own = `${a.scenario.subject} / ${a.scenario.name} / ${a.scenario.favourite}`;
const comparison = wishComparison(
  a.runs.filter((r) => r.arm === a.arm),
  b.runs.filter((r) => r.arm === b.arm),
  a.step,
  own,
);
const md = wishComparisonMarkdown(comparison, [labelA, labelB]);
const made =
  `Made by \`node --import tsx scripts/compare-wishes.ts ${fileA} ${fileB} "${labelA}" "${labelB}" ${out}\`, ` +
  `from the runs of \`${a.command}\` (${labelA}) and \`${b.command}\` (${labelB}).`;
writeFileSync(
  `${out}.json`,
  `${JSON.stringify({ labels: [labelA, labelB], commands: [a.command, b.command], policies: [a.policy, b.policy], comparison }, null, 2)}\n`,
);
writeFileSync(`${out}.md`, `${md}\n\n${made}\n`);
console.log(md);
