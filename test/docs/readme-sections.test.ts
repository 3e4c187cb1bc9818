/**
 * The README's generated sections hold exactly what scripts/readme-section.mjs makes from their
 * committed files (the reproduction table from docs/reproduction, the bench tables from
 * docs/bench/bench.json), so no figure there can be typed by hand or go stale.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateReadme, replaceSection, ROOT, SECTION_PAGES, SECTIONS, sectionBody, sectionsOf } from '../../scripts/readme-section.mjs';

const page = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const PAGES = [...new Set(Object.values(SECTION_PAGES).flat())];

describe('the generated sections of the README and docs/', () => {
  it.each(Object.entries(SECTIONS))('section "%s" is what the script makes from %s, on every page that holds it', (name, file) => {
    for (const path of SECTION_PAGES[name]) {
      const text = page(path);
      expect(text, path).toContain(`<!-- ${name}:start -->`);
      expect(replaceSection(text, name, sectionBody(name, file)), path).toBe(text);
    }
  });

  it.each(PAGES)('running the script on %s changes nothing', (path) => {
    expect(generateReadme(page(path), sectionsOf(path))).toBe(page(path));
  });

  it('the bench section refuses a JSON that lacks a figure its tables need', () => {
    const bench = JSON.parse(readFileSync(join(ROOT, SECTIONS.bench), 'utf8'));
    const stories = bench.models.find((m: { name: string }) => m.name === 'stories260K');
    delete stories.engine['webgpu-chromium'];
    const broken = join(mkdtempSync(join(tmpdir(), 'bench-json-')), 'bench.json');
    writeFileSync(broken, JSON.stringify(bench));
    expect(() => sectionBody('bench', broken)).toThrow(/lacks .*webgpu-chromium/);
  });
});
