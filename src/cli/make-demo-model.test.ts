import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hintTable, modelCard } from './make-demo-model';

const report = JSON.parse(readFileSync('public/models/storyteller-demo/demo-report.json', 'utf8'));

describe('the demo model card', () => {
  it('is made from the build report, with the same hint table the lab guide (docs/lab.md) shows', () => {
    const table = hintTable(report);
    expect(table).toContain(`| demo model, with the judge's hint wording | ${Math.round(report.hint.demo.withHint.name * 100)} % |`);
    const card = modelCard(report, report.command);
    expect(card).toContain(table);
    expect(card).toContain(report.command);
    // The committed card and table are what the report makes (`make-demo-model --card`).
    expect(readFileSync('public/models/storyteller-demo/hint-table.md', 'utf8')).toBe(`${table}\n`);
    expect(readFileSync('public/models/storyteller-demo/README.md', 'utf8')).toBe(card);
    expect(readFileSync('docs/lab.md', 'utf8')).toContain(table);
  });
});
