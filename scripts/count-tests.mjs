#!/usr/bin/env node
// Print "<passed> <failed>" from a Vitest or Playwright JSON report, or "0 0" when the report
// is missing or unreadable (the caller then goes by the exit status).
// Usage: node scripts/count-tests.mjs vitest|playwright REPORT.json
import { readFileSync } from 'node:fs';

const [kind, file] = process.argv.slice(2);
let passed = 0;
let failed = 0;
try {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  if (kind === 'vitest') {
    passed = Number(r.numPassedTests) || 0;
    failed = Number(r.numFailedTests) || 0;
    // A file that fails to import (or whose hooks throw) has a failed suite but no failed
    // test: count each such file once.
    for (const file of r.testResults ?? []) {
      const tests = file.assertionResults ?? [];
      if (file.status === 'failed' && !tests.some((t) => t.status === 'failed')) failed += 1;
    }
  } else if (kind === 'playwright') {
    const s = r.stats ?? {};
    passed = (Number(s.expected) || 0) + (Number(s.flaky) || 0);
    failed = Number(s.unexpected) || 0;
    failed += Array.isArray(r.errors) && r.errors.length > 0 && failed === 0 ? r.errors.length : 0;
  } else {
    throw new Error(`unknown report kind ${kind}`);
  }
} catch (e) {
  process.stderr.write(`count-tests: cannot read ${kind} report ${file}: ${e instanceof Error ? e.message : e}\n`);
}
process.stdout.write(`${passed} ${failed}\n`);
