#!/usr/bin/env node
// Print "<passed> <failed> <skipped>" from a Vitest or Playwright JSON report, or "0 0 0" when
// the report is missing or unreadable (the caller then goes by the exit status). Each skipped
// test (skip, todo, or never run) is also named on stderr, one "!!! skipped: ..." line each.
// Usage: node scripts/count-tests.mjs vitest|playwright REPORT.json
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [kind, file] = process.argv.slice(2);
let passed = 0;
let failed = 0;
const skipped = [];
try {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  if (kind === 'vitest') {
    passed = Number(r.numPassedTests) || 0;
    failed = Number(r.numFailedTests) || 0;
    for (const file of r.testResults ?? []) {
      const tests = file.assertionResults ?? [];
      // A file that fails to import (or whose hooks throw) has a failed suite but no failed
      // test: count each such file once.
      if (file.status === 'failed' && !tests.some((t) => t.status === 'failed')) failed += 1;
      for (const t of tests) {
        if (t.status !== 'passed' && t.status !== 'failed') skipped.push(`${relative(process.cwd(), file.name)}: ${t.fullName} (${t.status})`);
      }
    }
  } else if (kind === 'playwright') {
    const s = r.stats ?? {};
    passed = (Number(s.expected) || 0) + (Number(s.flaky) || 0);
    failed = Number(s.unexpected) || 0;
    failed += Array.isArray(r.errors) && r.errors.length > 0 && failed === 0 ? r.errors.length : 0;
    const walk = (suite, titles) => {
      const here = suite.title && !suite.title.endsWith('.ts') ? [...titles, suite.title] : titles;
      for (const spec of suite.specs ?? []) {
        if ((spec.tests ?? []).some((t) => t.status === 'skipped')) skipped.push(`${spec.file}: ${[...here, spec.title].join(' > ')}`);
      }
      for (const child of suite.suites ?? []) walk(child, here);
    };
    for (const suite of r.suites ?? []) walk(suite, []);
    // The stats count skips too; trust the larger of the two should the walk miss one.
    for (let i = skipped.length; i < (Number(s.skipped) || 0); i++) skipped.push('(a test the report does not name)');
  } else {
    throw new Error(`unknown report kind ${kind}`);
  }
} catch (e) {
  process.stderr.write(`count-tests: cannot read ${kind} report ${file}: ${e instanceof Error ? e.message : e}\n`);
}
for (const s of skipped) process.stderr.write(`!!! skipped: ${s}\n`);
process.stdout.write(`${passed} ${failed} ${skipped.length}\n`);
