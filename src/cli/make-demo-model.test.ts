import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { parseModelConfig } from '../models/config';
import { DEMO_DEFAULTS } from '../demo/make';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { DeepenedSource, deepenConfig } from '../models/deepen';
import { DirSource } from '../models/source-node';
import { demoBase, dropOtherLicences, STORIES260K } from './demo-base';
import { cliIo } from './io';
import { demoFolderFiles, hintTable, makeDemoModelCommand, modelCard, rebuildCommand, shortCount, type StoredReport } from './make-demo-model';

const DEMO = 'public/models/storyteller-demo';
const report = JSON.parse(readFileSync(`${DEMO}/demo-report.json`, 'utf8')) as StoredReport;
const configOf = (dir: string) => parseModelConfig(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')));
const silent = cliIo(
  () => {},
  () => {},
);

const scratch: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-card-'));
  scratch.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The folder a build from `baseDir` would write, with the committed report's measurements. */
function builtFrom(baseDir: string, deepen?: number[]): Map<string, string> {
  const from = demoBase(baseDir, deepen);
  const stored: StoredReport = { ...report, base: from.base, command: rebuildCommand('out/demo', from.base, report, 'cpu') };
  const config = JSON.parse(readFileSync(join(baseDir, 'config.json'), 'utf8'));
  const files = demoFolderFiles(from, stored, parseModelConfig(deepen ? deepenConfig(config, deepen) : config), new Uint8Array());
  return new Map(files.map(([name, data]) => [name, typeof data === 'string' ? data : new TextDecoder().decode(data)]));
}

describe('the demo model card', () => {
  it('is made from the build report, with the same hint table the lab guide (docs/lab.md) shows', () => {
    const table = hintTable(report);
    expect(table).toContain(`| demo model, with the judge's hint wording | ${Math.round(report.hint.demo.withHint.name * 100)} % |`);
    const card = modelCard(report, configOf(DEMO));
    expect(card).toContain(table);
    expect(card).toContain(report.command);
    // The committed card and table are what the report makes (`make-demo-model --card`).
    expect(readFileSync(`${DEMO}/hint-table.md`, 'utf8')).toBe(`${table}\n`);
    expect(readFileSync(`${DEMO}/README.md`, 'utf8')).toBe(card);
    expect(readFileSync('docs/lab.md', 'utf8')).toContain(table);
  });

  it('is written again unchanged by --card, also from a report that predates the recorded base', async () => {
    expect(report.base).toEqual(STORIES260K);
    const { base: _, ...older } = report;
    for (const stored of [report, older]) {
      const dir = tempDir();
      for (const name of ['config.json', 'README.md', 'hint-table.md']) copyFileSync(join(DEMO, name), join(dir, name));
      writeFileSync(join(dir, 'demo-report.json'), JSON.stringify(stored));
      await makeDemoModelCommand(['--card', dir], silent);
      for (const name of ['README.md', 'hint-table.md']) expect(readFileSync(join(dir, name), 'utf8')).toBe(readFileSync(join(DEMO, name), 'utf8'));
    }
  });

  it('from stories260K at the default path: the committed command, card, table and MIT licence', () => {
    const from = demoBase(STORIES260K.path);
    expect(from.base).toEqual(STORIES260K);
    expect(rebuildCommand(DEMO, from.base, report, 'cpu')).toBe(report.command);
    const files = builtFrom(STORIES260K.path);
    expect(files.get('LICENSE')).toBe(readFileSync(`${DEMO}/LICENSE`, 'utf8'));
    expect(files.has('LICENSE.md')).toBe(false);
    const card = modelCard({ ...report, base: from.base }, configOf(STORIES260K.path));
    expect(card).toBe(readFileSync(`${DEMO}/README.md`, 'utf8'));
  });

  it('from another base: names it, states its sizes, rebuilds from it and passes on its own licence', () => {
    const baseDir = dataPath('models/TinyStories-656K');
    const files = builtFrom(baseDir);
    const stored = JSON.parse(files.get('demo-report.json')!) as StoredReport;
    expect(stored.base).toEqual({ path: baseDir, name: 'TinyStories-656K', licence: 'LICENSE.md' });
    expect(stored.command).toContain(`--out out/demo --base ${baseDir} --seed 1 `);
    // The base's own licence file (Apache-2.0), not llama2.c's MIT text.
    expect(files.get('LICENSE.md')).toBe(readFileSync(join(baseDir, 'LICENSE.md'), 'utf8'));
    expect(files.has('LICENSE')).toBe(false);
    const card = files.get('README.md')!;
    expect(card).not.toMatch(/stories260K|MIT|260K|512-token/);
    expect(card).toContain('# storyteller-demo: TinyStories-656K that takes a hint');
    expect(card).toContain('It is a 656K-parameter model with a 2048-token vocabulary');
    expect(card).toContain('license: other\nlicense_link: LICENSE.md\nbase_model: TinyStories-656K\n');
    expect(card).toContain("copied here as `LICENSE.md`; this derivative is released under the base's licence.");
    expect(card).toContain(stored.command);
    expect(files.get('hint-table.md')).toContain("| TinyStories-656K, with the judge's hint wording |");
    expect(files.get('hint-table.md')).not.toContain('stories260K');
  });

  it('with the copy task: its rebuild command and its card say so; without it, neither does', () => {
    const from = demoBase(dataPath('models/stories260K'));
    // The shipped model was built with the copy task.
    expect(report.options.copyTask).toBe(true);
    const command = rebuildCommand('out/demo', from.base, report, 'cpu');
    expect(command).toMatch(/ --temperature [\d.]+ --copy-task --backend cpu$/);
    expect(modelCard({ ...report, base: from.base, command }, configOf(from.base.path))).toContain(
      'names made up, spelled from the whole alphabet (the copy task), so that',
    );
    const { copyTask: _, ...options } = report.options;
    const without = { ...report, options };
    const plainCommand = rebuildCommand('out/demo', from.base, without, 'cpu');
    expect(plainCommand).not.toContain('copy-task');
    expect(modelCard({ ...without, base: from.base, command: plainCommand }, configOf(from.base.path))).not.toContain('copy task');
  });

  it('from a deepened base: its config counts the added layers, and its rebuild command and card say how it was deepened', () => {
    const files = builtFrom(STORIES260K.path, [1, 2, 3]);
    expect(JSON.parse(files.get('config.json')!).num_hidden_layers).toBe(8);
    const stored = JSON.parse(files.get('demo-report.json')!) as StoredReport;
    expect(stored.base).toEqual({ ...STORIES260K, deepen: [1, 2, 3] });
    expect(stored.command).toMatch(/^npx nextstate make-demo-model --out out\/demo --deepen 1,2,3 --seed 1 /);
    expect(files.get('README.md')).toContain(
      'deepened to 8 layers\n(after layers 1, 2 and 3, a copy of the layer that writes nothing until fine-tuned), fine-tuned so that',
    );
    expect(builtFrom(STORIES260K.path).get('README.md')).not.toContain('deepened');
  });

  it("deepens stories260K without moving its log-probs, so fine-tuning starts from the base's stories", async () => {
    const source = new DirSource(dataPath('models/stories260K'));
    const base = await Policy.load(source, new CpuBackend());
    const deep = await Policy.load(new DeepenedSource(source, [3, 1, 2]), new CpuBackend());
    expect(deep.config.numLayers).toBe(base.config.numLayers + 3);
    const items = [{ prompt: 'Once upon a time, there was a little dog named Max.', completion: ' Max liked to play with his ball in the park.' }];
    const [[a], [b]] = [await base.scoreText(items), await deep.scoreText(items)];
    expect(Array.from(b.logprobs)).toEqual(Array.from(a.logprobs));
  });

  it('refuses a --deepen list that is not layer numbers before the build starts', async () => {
    await expect(makeDemoModelCommand(['--out', tempDir(), '--deepen', '1,x'], silent)).rejects.toThrow('--deepen: "x" is not valid');
    await expect(makeDemoModelCommand(['--out', tempDir(), '--deepen', '9'], silent)).rejects.toThrow(
      '--deepen names layer 9, but the base has layers 0 to 4; name layers of the base.',
    );
  });

  it('names --story-tokens in its rebuild command only when the stories were not cut at the default length', () => {
    const from = demoBase(dataPath('models/stories260K'));
    expect(report.options.maxNewTokens).toBe(DEMO_DEFAULTS.maxNewTokens);
    expect(rebuildCommand('out/demo', from.base, report, 'cpu')).not.toContain('--story-tokens');
    const longer = { ...report, options: { ...report.options, maxNewTokens: 96 } };
    expect(rebuildCommand('out/demo', from.base, longer, 'cpu')).toMatch(/ --temperature [\d.]+ --story-tokens 96 --copy-task --backend cpu$/);
  });

  it('from a base without a licence file: writes none, and says so in one line', () => {
    const baseDir = join(tempDir(), 'unlicensed-656K');
    const source = dataPath('models/TinyStories-656K');
    mkdirSync(baseDir);
    for (const name of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'])
      copyFileSync(join(source, name), join(baseDir, name));
    const files = builtFrom(baseDir);
    expect(files.has('LICENSE')).toBe(false);
    expect(files.has('LICENSE.md')).toBe(false);
    const card = files.get('README.md')!;
    expect(card).toContain('license: unknown\nbase_model: unlicensed-656K\n');
    expect(card).toContain(
      "## Licence\n\nunlicensed-656K's folder has no licence file, so none is written here: find the base's licence before sharing this model.\n",
    );
  });

  it('leaves no licence of an earlier build beside the one this build wrote', () => {
    const dir = tempDir();
    for (const name of ['LICENSE', 'LICENSE.md']) writeFileSync(join(dir, name), 'an earlier build');
    dropOtherLicences(dir, 'LICENSE.md');
    expect([existsSync(join(dir, 'LICENSE')), existsSync(join(dir, 'LICENSE.md'))]).toEqual([false, true]);
    dropOtherLicences(dir, null);
    expect(existsSync(join(dir, 'LICENSE.md'))).toBe(false);
  });

  it('writes a parameter count as model names do', () => {
    expect([260_032, 656_000, 134_515_008, 1_543_714_304].map(shortCount)).toEqual(['260K', '656K', '135M', '1.54B']);
  });
});
