/**
 * The concept map (docs/concepts.md) and the pages of docs/ name files and functions; these tests keep the
 * names true, so a rename or a move fails here instead of leaving the docs pointing at nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeReferences, headingAnchors, missingExport, pageLinks, referenceProblems, ROOT } from './code-references';

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const CODE_PAGES = ['docs/architecture.md', 'docs/method.md', 'docs/concepts.md'];
/** The page that holds the concept map, just before the architecture in brief. */
const MAP_PAGE = 'docs/concepts.md';
const MAP_HEADING = '## Where each paper concept lives';

/** The concept map's rows: the concept, the file its link shows, the names after it. */
function conceptMap(): { concept: string; file: string; symbols: string[] }[] {
  const readme = readFileSync(join(ROOT, MAP_PAGE), 'utf8');
  const start = readme.indexOf(`\n${MAP_HEADING}\n`);
  expect(start, `${MAP_PAGE} has no "${MAP_HEADING}" section`).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const rows = readme
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| ---') && !l.startsWith('| concept |'));
  return rows.map((row) => {
    const cells = row
      .slice(2, -2)
      .split(' | ')
      .map((c) => c.trim());
    expect(cells, `a concept map row has three cells: ${row}`).toHaveLength(3);
    const file = /^\[`([^`]+)`\]\(([^)]+)\)$/.exec(cells[1]);
    expect(file, `the file cell is [\`path\`](path): ${row}`).not.toBeNull();
    expect(file![1], `the link shows the path it points at: ${row}`).toBe(relative(ROOT, join(ROOT, dirname(MAP_PAGE), file![2])));
    const symbols = [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(symbols.length, `the function cell names at least one export: ${row}`).toBeGreaterThan(0);
    return { concept: cells[0], file: file![1], symbols };
  });
}

describe('the concept map', () => {
  it('sits just before the Architecture section', () => {
    const readme = readFileSync(join(ROOT, MAP_PAGE), 'utf8');
    const headings = [...readme.matchAll(/^## .+$/gm)].map((m) => m[0]);
    expect(headings[headings.indexOf(MAP_HEADING) + 1]).toBe('## Architecture');
  });

  it('names, for every row, a file that exists and exports the named symbols', () => {
    const rows = conceptMap();
    expect(rows.length).toBeGreaterThan(20);
    const problems = rows.flatMap((row) => {
      if (!existsSync(join(ROOT, row.file))) return [`${row.file} does not exist (${row.concept})`];
      return row.symbols.flatMap((s) => missingExport(row.file, s) ?? []);
    });
    expect(problems).toEqual([]);
  });

  it('would catch a renamed export or member', () => {
    expect(missingExport('src/rl/votes.ts', 'majorityVote')).toBeNull();
    expect(missingExport('src/rl/votes.ts', 'majorityVotes')).toMatch(/exports no majorityVotes/);
    expect(missingExport('src/rl/sessions.ts', 'SessionTracker.observe')).toBeNull();
    expect(missingExport('src/rl/sessions.ts', 'SessionTracker.watch')).toMatch(/has no member watch/);
    expect(missingExport('src/rl/index.ts', 'majorityVote')).toBeNull();
  });

  it('covers the concepts of the paper', () => {
    const concepts = conceptMap().map((r) => r.concept.toLowerCase());
    const required = [
      'session pairing',
      'prm vote',
      'majority vote',
      'binary rl reward',
      'hint extraction',
      'hint filter',
      'teacher context',
      'frozen initial teacher',
      'a_opd',
      'combined advantage',
      'zero-advantage batch rule',
      'ppo clip',
      'k3 kl',
      'sample-mean aggregation',
      'top-level run loop',
      'evaluator',
      'tool-call track',
      'step reward',
      'per-step standardization',
    ];
    expect(required.filter((c) => !concepts.some((row) => row.includes(c)))).toEqual([]);
  });
});

describe('the docs', () => {
  it.each(PAGES)('%s: every code reference names a file that exists and exports what it says', (page) => {
    const refs = codeReferences(page);
    // The pages about the code must be read as citing some: a reader that found none is broken.
    if (CODE_PAGES.includes(page)) expect(refs.length).toBeGreaterThan(0);
    expect(refs.flatMap(referenceProblems)).toEqual([]);
  });

  it.each(PAGES)('%s: every relative link reaches a file, and every anchor a heading', (page) => {
    const problems: string[] = [];
    for (const link of pageLinks(page)) {
      if (!existsSync(join(ROOT, link.target))) problems.push(`${page}:${link.line}: ${link.target} does not exist`);
      else if (link.anchor !== null && link.target.endsWith('.md') && !headingAnchors(link.target).has(link.anchor)) {
        problems.push(`${page}:${link.line}: ${link.target} has no heading #${link.anchor}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the repository cites no file outside it', () => {
    // Spelled in pieces so that this file does not match itself.
    const outside = ['DESIGN' + '.md', '../' + 'shared'];
    const skip = new Set(['node_modules', 'dist', 'dist-cli', '.git', 'scratch', 'test-results', 'playwright-report', '.cache', 'results', 'artifacts', 'data', 'models']);
    const hits: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(ROOT, dir))) {
        const path = join(dir, name);
        if (statSync(join(ROOT, path)).isDirectory()) {
          if (!skip.has(name)) walk(path);
        } else if (/\.(ts|mts|mjs|js|svelte|md|sh|json|html)$/.test(name) && name !== 'package-lock.json') {
          const text = readFileSync(join(ROOT, path), 'utf8');
          for (const needle of outside) if (text.includes(needle)) hits.push(`${relative(ROOT, join(ROOT, path))}: ${needle}`);
        }
      }
    };
    for (const top of ['src', 'test', 'e2e', 'bench', 'scripts', 'docs', 'public', 'bin', '.ci']) {
      try {
        if (statSync(join(ROOT, top)).isDirectory()) walk(top);
      } catch {
        // a folder this checkout does not have
      }
    }
    for (const file of ['README.md', 'data/README.md', 'index.html', 'package.json', 'eslint.config.js', 'vite.config.ts', 'vitest.config.ts']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const needle of outside) if (text.includes(needle)) hits.push(`${file}: ${needle}`);
    }
    expect(hits).toEqual([]);
  });
});
