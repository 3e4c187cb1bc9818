import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { PEFT_CONFIG, PEFT_WEIGHTS } from '../../gpu/peft';
import { validateRecord } from '../../rl/validate';
import { exampleConfig } from '../../runtime/run-config';
import { adapterFiles, fileStem, importedMessage, runFileName, samplesFile } from './run-files';

const recorded = (name: string) =>
  readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line, i) => validateRecord(JSON.parse(line), `line ${i + 1}`));

describe('run files', () => {
  it('names files after the label, safely', () => {
    expect(fileStem('student · combined / Qwen')).toBe('student-combined-Qwen');
    expect(fileStem('***')).toBe('run');
    expect(fileStem('x'.repeat(200))).toHaveLength(80);
    expect(runFileName('a b')).toBe('a-b.nsrun');
  });

  it('writes the adapter in the PEFT layout', async () => {
    const files = adapterFiles({ files: { [PEFT_WEIGHTS]: new Uint8Array([1, 2, 3]), [PEFT_CONFIG]: '{"r":8}' } });
    expect(files.map((f) => f.name)).toEqual([PEFT_WEIGHTS, PEFT_CONFIG]);
    expect(new Uint8Array(await files[0].blob.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(await files[1].blob.text()).toBe('{"r":8}');
  });

  it("renders a tool-call run's samples with the calculator, a personal run's without tools", async () => {
    const tool = samplesFile(recorded('recorded-toolcall.jsonl'), exampleConfig('toolcall'), 'tools');
    expect(tool.rows).toBeGreaterThan(0);
    expect(tool.name).toBe('tools-samples.jsonl');
    expect(await tool.blob.text()).toContain('calculator');
    const story = samplesFile(recorded('recorded-run.jsonl'), exampleConfig('storyteller'), 'story');
    expect(story.rows).toBeGreaterThan(0);
    expect(await story.blob.text()).not.toContain('"tools"');
  });

  it('says what matching hashes show, or that a file carried none', () => {
    expect(importedMessage('a.nsrun', 'verified')).toMatch(/hashes match: no accidental damage\./);
    expect(importedMessage('a.nsrun', 'verified')).not.toMatch(/verified/);
    expect(importedMessage('a.nsrun', 'unverified')).toMatch(/unverified/);
  });
});
