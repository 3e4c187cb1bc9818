/**
 * The README's generated sections hold exactly what scripts/readme-section.mjs makes from their
 * committed files (the reproduction table from docs/reproduction, the bench tables from
 * docs/bench/bench.json), so no figure there can be typed by hand or go stale.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateReadme, replaceSection, ROOT, SECTIONS, sectionBody } from '../../scripts/readme-section.mjs';

const readme = () => readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('the README generated sections', () => {
  it.each(Object.entries(SECTIONS))('section "%s" is what the script makes from %s', (name, file) => {
    const text = readme();
    expect(text).toContain(`<!-- ${name}:start -->`);
    expect(replaceSection(text, name, sectionBody(name, file))).toBe(text);
  });

  it('running the script on the README changes nothing', () => {
    expect(generateReadme(readme())).toBe(readme());
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
