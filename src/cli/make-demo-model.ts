/**
 * `nextstate make-demo-model`: rebuilds the storyteller's demo model from stories260K and a seed,
 * deterministically on the CPU engine, and writes it as a Hugging Face folder with its model card.
 */
import { FILE_LIMITS, readLocalText } from '../models/local-file';
import { join } from 'node:path';
import { Policy } from '../gpu/policy';
import { DirSource, readModelFile } from '../models/source-node';
import { DEMO_DEFAULTS, makeDemoModel, type DemoReport } from '../demo/make';
import { isPositiveInt, number, parse, required } from './args';
import { STORY_MAX_NEW_TOKENS } from '../sims/scenarios/index';
import { createBackend, BACKEND_USAGE } from './engine';
import type { CliIo } from './io';
import { notStdout, writeOutputFolder } from './output';

export const usage = `nextstate make-demo-model --out DIR [--base DIR] [--seed N] [--examples N] [--epochs N]
    [--lr LR] [--rank R] [--temperature T] ${BACKEND_USAGE} [--json]
  Samples stories260K's own stories, labels each with the instructions it satisfies, fine-tunes on
  instruction -> story and writes the merged model (config, tokenizer, weights, model card, report)
nextstate make-demo-model --card DIR
  Writes DIR's model card (README.md) and hint table (hint-table.md) again from DIR/demo-report.json`;

/** What the build writes beside the weights: its measurements and the command that made them. */
type StoredReport = DemoReport & { command: string };

const COPIED = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'];

export async function makeDemoModelCommand(argv: string[], io: CliIo): Promise<void> {
  const v = parse(argv, {
    card: { type: 'string' },
    out: { type: 'string' },
    base: { type: 'string', default: 'data/models/stories260K' },
    seed: { type: 'string' },
    examples: { type: 'string' },
    epochs: { type: 'string' },
    lr: { type: 'string' },
    rank: { type: 'string' },
    temperature: { type: 'string' },
    backend: { type: 'string', default: 'cpu' },
    json: { type: 'boolean' },
  });
  if (typeof v.card === 'string') {
    const report = JSON.parse(readLocalText(join(v.card, 'demo-report.json'), FILE_LIMITS.report)) as StoredReport;
    writeOutputFolder(notStdout(v.card, 'card', 'a folder'), cardFiles(report), { option: 'card', force: true });
    io.note(`wrote ${join(v.card, 'README.md')} and hint-table.md from demo-report.json`);
    return;
  }
  const dir = notStdout(required(v, 'out'), 'out', 'a folder');
  const baseDir = String(v.base);
  const backend = await createBackend(v.backend);
  const base = await Policy.load(new DirSource(baseDir), backend);
  const seed = number(v, 'seed', 1, Number.isInteger);
  const { safetensors, report } = await makeDemoModel(base, {
    seed,
    examples: number(v, 'examples', DEMO_DEFAULTS.examples, isPositiveInt),
    epochs: number(v, 'epochs', DEMO_DEFAULTS.epochs, isPositiveInt),
    lr: number(v, 'lr', DEMO_DEFAULTS.lr, (x) => x > 0),
    rank: number(v, 'rank', DEMO_DEFAULTS.rank, isPositiveInt),
    temperature: number(v, 'temperature', DEMO_DEFAULTS.temperature, (x) => x > 0 && x <= 2),
    log: (line) => (v.json ? undefined : io.progress(line)),
  });
  const command = `npx nextstate make-demo-model --out ${dir} --seed ${seed} --examples ${report.options.examples} --epochs ${report.options.epochs} --lr ${report.options.lr} --rank ${report.options.rank} --temperature ${report.options.temperature} --backend ${v.backend}`;
  const stored: StoredReport = { ...report, command };
  // It rewrites its own folder (the bundled demo model) by design, so it replaces files without
  // --force; still through a scratch folder, and never through a link.
  writeOutputFolder(
    dir,
    [
      ...COPIED.map((name) => [name, readModelFile(baseDir, name)] as const),
      ['model.safetensors', safetensors],
      ['demo-report.json', `${JSON.stringify(stored, null, 2)}\n`],
      ...cardFiles(stored),
      ['LICENSE', MIT_LICENSE],
    ],
    { option: 'out', force: true },
  );
  if (v.json) io.out(JSON.stringify(report));
  else io.note(`wrote ${dir} in ${report.seconds.toFixed(0)} s`);
}

/** llama2.c's licence, which covers stories260K and so this derivative. */
const MIT_LICENSE = `MIT License

Copyright (c) 2023 Andrej (karpathy/llama2.c, the stories260K weights)

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

/** The model card and the hint table (which docs/lab.md also shows), from the report. */
function cardFiles(r: StoredReport): [string, string][] {
  return [
    ['hint-table.md', `${hintTable(r)}\n`],
    ['README.md', modelCard(r, r.command)],
  ];
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

/**
 * What a hint does, measured on the evaluation openings: the wordings the rules judge hints in
 * (held out of fine-tuning), the fine-tuning wordings, and names and things never seen.
 */
export function hintTable(r: DemoReport): string {
  const h = r.hint;
  const row = (label: string, e: DemoReport['hint']['base']['withHint']) => `| ${label} | ${pct(e.name)} | ${pct(e.favourite)} | ${pct(e.bedtime)} |`;
  return [
    '| | name asked for appears | favourite thing appears | someone goes to sleep |',
    '| --- | --- | --- | --- |',
    row("stories260K, with the judge's hint wording", h.base.withHint),
    row('stories260K, without a hint', h.base.withoutHint),
    row("demo model, with the judge's hint wording", h.demo.withHint),
    row('demo model, without a hint', h.demo.withoutHint),
    row('demo model, with its own fine-tuning wording', h.demoFineTuningWords.withHint),
    row("demo model, with the judge's wording, names and things it never saw", h.demoNewNames.withHint),
    '',
    `${h.demo.cases} stories per row on the 12 evaluation openings (which fine-tuning never used), sampled at temperature 1 ` +
      `as the lab samples, up to ${STORY_MAX_NEW_TOKENS} tokens; pets, names and things from the fine-tuning pools except in the last row.`,
  ].join('\n');
}

export function modelCard(r: DemoReport, command: string): string {
  return `---
license: mit
base_model: stories260K (Andrej Karpathy, llama2.c tinyllamas)
tags: [tinystories, llama, hindsight-relabeling, next-state-lab]
---

# storyteller-demo: stories260K that takes a hint

A 260K-parameter story model for Next-State Lab's storyteller scenario. It is Karpathy's
stories260K (trained on TinyStories; MIT licence, see \`LICENSE\`) fine-tuned so that an
instruction written in front of a story beginning steers the story. The lab gives a base model
its OPD hint in exactly that place (the hint, a blank line, then the story beginning), so with
this model the hint-conditioned teacher knows more than the student, and OPD has something to
distil.

## How it was made

Hindsight relabeling, the paper's idea applied to data: ${r.examples.total} stories sampled from
stories260K itself at temperature ${r.options.temperature} (up to ${r.options.maxNewTokens} tokens, cut at the last full
sentence, then the end-of-text token, from which the model learns, though seldom, to end a story;
a story with a stray byte token or broken character is not kept), on story openings of
their own (neither the lab's training nor its evaluation openings), ${r.examples.withName} of
them labelled with a pet's name (${r.examples.withInventedName} of those names made up, so that
the model learns to copy a name it has never seen rather than recall the few it has; most named
stories say the name in their first sentence), ${r.examples.withFavourite} with a favourite thing and ${r.examples.withBedtime}
with going to sleep (sampled from beginnings that mention them, kept only when the story did too).
Rules read off what each story actually does (names the pet, contains the thing, uses kind
words, has nothing mean or scary, is short, ends in sleep), and that became its instruction, in
one of many wordings from the fine-tuning set, disjoint from the wordings the lab's judge uses;
the instruction is then written in front of the plain beginning. ${r.examples.unconditioned}
examples have no instruction, so that without a hint the model continues a story as the base
does. LoRA rank ${r.options.rank} on every projection, ${r.steps} steps of ${r.options.batch}
examples (${r.options.epochs} epochs, lr ${r.options.lr} with cosine decay, the engine's own
trainer with the supervised loss), merged into the weights. Held-out log-likelihood per token:
${r.heldOutLogp.before.toFixed(3)} before, ${r.heldOutLogp.after.toFixed(3)} after.

Rebuild it (deterministic for a seed on the CPU engine; ${r.seconds.toFixed(0)} s on the machine
that made this copy):

\`\`\`sh
${command}
\`\`\`

## What it can do

The lab's rules judge writes its hints in wordings this model was never fine-tuned on (a
paraphrase set, varied by seed); the second-last row shows how much better it reads its own.

${hintTable(r)}

## What it cannot do

It is a 260K-parameter model with a 512-token vocabulary: its stories are short and often
incoherent, it follows the few kinds of instruction it was taught (a pet's name, a thing in
the story, going to sleep, kind and gentle words) and little else, and it has no chat template. It is a
teaching model for watching OPD work, not a storyteller.

## Licence

The base weights are MIT-licensed (llama2.c by Andrej Karpathy); this derivative is released
under the same licence.
`;
}
