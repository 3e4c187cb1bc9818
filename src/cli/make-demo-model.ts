/**
 * `nextstate make-demo-model`: rebuilds the storyteller's demo model from a base story model
 * (stories260K unless --base names another) and a seed, deterministically on the CPU engine, and
 * writes it as a Hugging Face folder with its model card.
 */
import { FILE_LIMITS, readLocalText } from '../models/local-file';
import { join } from 'node:path';
import { Policy } from '../gpu/policy';
import { parameterCount, parseModelConfig, type ModelConfig } from '../models/config';
import { DirSource, readModelFile } from '../models/source-node';
import { DEMO_DEFAULTS, makeDemoModel, type DemoReport } from '../demo/make';
import { isPositiveInt, list, number, parse, required } from './args';
import { DeepenedSource, deepenConfig } from '../models/deepen';
import { STORY_MAX_NEW_TOKENS } from '../sims/scenarios/index';
import { demoBase, dropOtherLicences, reportBase, STORIES260K, type DemoBase } from './demo-base';
import { createBackend, BACKEND_USAGE } from './engine';
import type { CliIo } from './io';
import { notStdout, writeOutputFolder } from './output';

export const usage = `nextstate make-demo-model --out DIR [--base DIR] [--seed N] [--examples N] [--epochs N]
    [--lr LR] [--rank R] [--temperature T] [--story-tokens N] [--copy-task] [--deepen L,...] ${BACKEND_USAGE} [--json]
  Samples the base model's own stories (--base, default ${STORIES260K.path}), labels each with the
  instructions it satisfies, fine-tunes on instruction -> story and writes the merged model
  (config, tokenizer, weights, model card, report, the base's licence). --copy-task makes most
  names made up and spelled from the whole alphabet, so the model learns to copy a name it never met.
  --story-tokens (default ${DEMO_DEFAULTS.maxNewTokens}) caps the sampled training stories, cut at their last full sentence.
  --deepen 1,2,3 first inserts after each of those layers a copy of it that writes nothing (its
  o_proj and down_proj zero), so the base's function is unchanged and fine-tuning has more layers.
nextstate make-demo-model --card DIR
  Writes DIR's model card (README.md) and hint table (hint-table.md) again from DIR/demo-report.json`;

/**
 * What the build writes beside the weights: its measurements, the base it fine-tuned (absent in
 * reports from before it was recorded: stories260K) and the command that made them.
 */
export type StoredReport = DemoReport & { base?: DemoBase; command: string };

const COPIED = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'];

export async function makeDemoModelCommand(argv: string[], io: CliIo): Promise<void> {
  const v = parse(argv, {
    card: { type: 'string' },
    out: { type: 'string' },
    base: { type: 'string', default: STORIES260K.path },
    seed: { type: 'string' },
    examples: { type: 'string' },
    epochs: { type: 'string' },
    lr: { type: 'string' },
    rank: { type: 'string' },
    temperature: { type: 'string' },
    'story-tokens': { type: 'string' },
    'copy-task': { type: 'boolean' },
    deepen: { type: 'string' },
    backend: { type: 'string', default: 'cpu' },
    json: { type: 'boolean' },
  });
  if (typeof v.card === 'string') {
    const report = JSON.parse(readLocalText(join(v.card, 'demo-report.json'), FILE_LIMITS.report)) as StoredReport;
    writeOutputFolder(notStdout(v.card, 'card', 'a folder'), cardFiles(report, folderConfig(v.card)), { option: 'card', force: true });
    io.note(`wrote ${join(v.card, 'README.md')} and hint-table.md from demo-report.json`);
    return;
  }
  const dir = notStdout(required(v, 'out'), 'out', 'a folder');
  // Before the long build, so that an unreadable licence file is refused at once.
  const deepen = typeof v.deepen === 'string' ? list(v.deepen, 'deepen', (s) => (/^\d+$/.test(s) ? Number(s) : null)) : undefined;
  const from = demoBase(String(v.base), deepen);
  const backend = await createBackend(v.backend);
  const source = new DirSource(from.base.path);
  const base = await Policy.load(deepen ? new DeepenedSource(source, deepen) : source, backend);
  const { safetensors, report } = await makeDemoModel(base, {
    seed: number(v, 'seed', 1, Number.isInteger),
    examples: number(v, 'examples', DEMO_DEFAULTS.examples, isPositiveInt),
    epochs: number(v, 'epochs', DEMO_DEFAULTS.epochs, isPositiveInt),
    lr: number(v, 'lr', DEMO_DEFAULTS.lr, (x) => x > 0),
    rank: number(v, 'rank', DEMO_DEFAULTS.rank, isPositiveInt),
    temperature: number(v, 'temperature', DEMO_DEFAULTS.temperature, (x) => x > 0 && x <= 2),
    maxNewTokens: number(v, 'story-tokens', DEMO_DEFAULTS.maxNewTokens, isPositiveInt),
    // Only when asked: the default build's report stays byte for byte what it was.
    ...(v['copy-task'] ? { copyTask: true } : {}),
    log: (line) => (v.json ? undefined : io.progress(line)),
  });
  const stored: StoredReport = { ...report, base: from.base, command: rebuildCommand(dir, from.base, report, String(v.backend)) };
  // It rewrites its own folder (the bundled demo model) by design, so it replaces files without
  // --force; still through a scratch folder, and never through a link.
  writeOutputFolder(dir, demoFolderFiles(from, stored, base.config, safetensors), { option: 'out', force: true });
  dropOtherLicences(dir, from.base.licence);
  if (v.json) io.out(JSON.stringify(report));
  else io.note(`wrote ${dir} in ${report.seconds.toFixed(0)} s`);
}

/** The command that rebuilds the model; the default base goes unsaid, as it always has. */
export function rebuildCommand(dir: string, base: DemoBase, r: DemoReport, backend: string): string {
  const from = `${base.path === STORIES260K.path ? '' : ` --base ${base.path}`}${base.deepen ? ` --deepen ${base.deepen.join(',')}` : ''}`;
  const o = r.options;
  return `npx nextstate make-demo-model --out ${dir}${from} --seed ${r.seed} --examples ${o.examples} --epochs ${o.epochs} --lr ${o.lr} --rank ${o.rank} --temperature ${o.temperature}${o.maxNewTokens === DEMO_DEFAULTS.maxNewTokens ? '' : ` --story-tokens ${o.maxNewTokens}`}${o.copyTask ? ' --copy-task' : ''} --backend ${backend}`;
}

/** Everything the build writes: the base's config and tokenizer, the weights, report, card and licence. */
export function demoFolderFiles(
  from: ReturnType<typeof demoBase>,
  stored: StoredReport,
  config: ModelConfig,
  safetensors: Uint8Array,
): (readonly [string, Uint8Array | string])[] {
  const { deepen } = from.base;
  // A deepened base's config counts its added layers; every other file is the base's own.
  const copied = (name: string) => {
    const data = readModelFile(from.base.path, name);
    if (name !== 'config.json' || !deepen) return data;
    return `${JSON.stringify(deepenConfig(JSON.parse(new TextDecoder().decode(data)), deepen), null, 2)}\n`;
  };
  return [
    ...COPIED.map((name) => [name, copied(name)] as const),
    ['model.safetensors', safetensors],
    ['demo-report.json', `${JSON.stringify(stored, null, 2)}\n`],
    ...cardFiles(stored, config),
    ...(from.licence ? [from.licence] : []),
  ];
}

/** The config of a built model folder: the base's, copied, whose sizes the card states. */
function folderConfig(dir: string): ModelConfig {
  return parseModelConfig(JSON.parse(new TextDecoder().decode(readModelFile(dir, 'config.json'))));
}

/** The model card and the hint table (which docs/lab.md also shows), from the report. */
function cardFiles(r: StoredReport, config: ModelConfig): [string, string][] {
  return [
    ['hint-table.md', `${hintTable(r)}\n`],
    ['README.md', modelCard(r, config)],
  ];
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

/**
 * What a hint does, measured on the evaluation openings: the wordings the rules judge hints in
 * (held out of fine-tuning), the fine-tuning wordings, and names and things never seen.
 */
export function hintTable(r: StoredReport): string {
  const h = r.hint;
  const base = reportBase(r).name;
  const row = (label: string, e: DemoReport['hint']['base']['withHint']) => `| ${label} | ${pct(e.name)} | ${pct(e.favourite)} | ${pct(e.bedtime)} |`;
  return [
    '| | name asked for appears | favourite thing appears | someone goes to sleep |',
    '| --- | --- | --- | --- |',
    row(`${base}, with the judge's hint wording`, h.base.withHint),
    row(`${base}, without a hint`, h.base.withoutHint),
    row("demo model, with the judge's hint wording", h.demo.withHint),
    row('demo model, without a hint', h.demo.withoutHint),
    row('demo model, with its own fine-tuning wording', h.demoFineTuningWords.withHint),
    row("demo model, with the judge's wording, names and things it never saw", h.demoNewNames.withHint),
    '',
    `${h.demo.cases} stories per row on the 12 evaluation openings (which fine-tuning never used), sampled at temperature 1 ` +
      `as the lab samples, up to ${STORY_MAX_NEW_TOKENS} tokens; pets, names and things from the fine-tuning pools except in the last row.`,
  ].join('\n');
}

/** What the card says of its base: where it came from and the licence the derivative is under. */
interface Credit {
  /** The front matter's licence and base_model lines. */
  frontMatter: string;
  /** The base as the card's first paragraph introduces it. */
  intro: string;
  licence: string;
}

/** stories260K's folder names its maker and its licence (MIT, whose text the build writes). */
const STORIES260K_CREDIT: Credit = {
  frontMatter: 'license: mit\nbase_model: stories260K (Andrej Karpathy, llama2.c tinyllamas)',
  intro: "Karpathy's\nstories260K (trained on TinyStories; MIT licence, see `LICENSE`)",
  licence: 'The base weights are MIT-licensed (llama2.c by Andrej Karpathy); this derivative is released\nunder the same licence.',
};

/** Any other base is known only by its folder: its name and the licence file it came with, if any. */
function credit(b: DemoBase): Credit {
  if (b.name === STORIES260K.name) return STORIES260K_CREDIT;
  if (!b.licence) {
    return {
      frontMatter: `license: unknown\nbase_model: ${b.name}`,
      intro: `${b.name} (whose folder has no licence file)`,
      licence: `${b.name}'s folder has no licence file, so none is written here: find the base's licence before sharing this model.`,
    };
  }
  return {
    frontMatter: `license: other\nlicense_link: ${b.licence}\nbase_model: ${b.name}`,
    intro: `${b.name} (its licence file is copied as \`${b.licence}\`)`,
    licence: `The base's licence file is copied here as \`${b.licence}\`; this derivative is released under the base's licence.`,
  };
}

/** "260K", "135M", "1.54B": a parameter count as model names write it. */
export function shortCount(n: number): string {
  const [unit, scale] = n >= 1e9 ? ['B', 1e9] : n >= 1e6 ? ['M', 1e6] : ['K', 1e3];
  return `${Number((n / scale).toPrecision(3))}${unit}`;
}

/** How the base was deepened before fine-tuning, as the card's first sentence goes on; '' if it was not. */
function deepened(b: DemoBase, config: ModelConfig): string {
  if (!b.deepen) return '';
  const layers = b.deepen.length === 1 ? `layer ${b.deepen[0]}` : `layers ${b.deepen.slice(0, -1).join(', ')} and ${b.deepen.at(-1)}`;
  return `, deepened to ${config.numLayers} layers\n(after ${layers}, a copy of the layer that writes nothing until fine-tuned),`;
}

/** The model card; the base's name and credit come from the report, its sizes from its config. */
export function modelCard(r: StoredReport, config: ModelConfig): string {
  const base = reportBase(r);
  const about = credit(base);
  const size = `${shortCount(parameterCount(config))}-parameter`;
  return `---
${about.frontMatter}
tags: [tinystories, ${config.family}, hindsight-relabeling, next-state-lab]
---

# storyteller-demo: ${base.name} that takes a hint

A ${size} story model for Next-State Lab's storyteller scenario. It is ${about.intro}${deepened(base, config)} fine-tuned so that an
instruction written in front of a story beginning steers the story. The lab gives a base model
its OPD hint in exactly that place (the hint, a blank line, then the story beginning), so with
this model the hint-conditioned teacher knows more than the student, and OPD has something to
distil.

## How it was made

Hindsight relabeling, the paper's idea applied to data: ${r.examples.total} stories sampled from
${base.name} itself at temperature ${r.options.temperature} (up to ${r.options.maxNewTokens} tokens, cut at the last full
sentence, then the end-of-text token, from which the model learns, though seldom, to end a story;
a story with a stray byte token or broken character is not kept), on story openings of
their own (neither the lab's training nor its evaluation openings), ${r.examples.withName} of
them labelled with a pet's name (${r.examples.withInventedName} of those names made up${r.options.copyTask ? ', spelled from the whole alphabet (the copy task)' : ''}, so that
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
${r.command}
\`\`\`

## What it can do

The lab's rules judge writes its hints in wordings this model was never fine-tuned on (a
paraphrase set, varied by seed); the second-last row shows how much better it reads its own.

${hintTable(r)}

## What it cannot do

It is a ${size} model with a ${config.vocabSize}-token vocabulary: its stories are short and often
incoherent, it follows the few kinds of instruction it was taught (a pet's name, a thing in
the story, going to sleep, kind and gentle words) and little else, and it has no chat template. It is a
teaching model for watching OPD work, not a storyteller.

## Licence

${about.licence}
`;
}
