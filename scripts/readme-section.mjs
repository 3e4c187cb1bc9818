#!/usr/bin/env node
// The generated sections of the README and docs/: the text between `<!-- NAME:start -->` and
// `<!-- NAME:end -->` is made from a committed file, so that no figure there is typed by hand.
// SECTION_PAGES says which pages hold each section.
//
//   node scripts/readme-section.mjs reproduction docs/reproduction/reproduction.md
//   node scripts/readme-section.mjs bench docs/bench/bench.json
//   node scripts/readme-section.mjs            (every section from its committed file)
//
// A Markdown file goes in as it is (`nextstate reproduce` writes reproduction.md); the bench's
// JSON (`npm run -s bench > docs/bench/bench.json`) is rendered by benchSection() below, which
// fails with the missing field's path when the JSON lacks a figure its tables need.
// test/docs/readme-sections.test.ts checks that every page holds what this script makes.
// docs/serve.md's OpenClaw recipe is made by a TypeScript function instead: scripts/openclaw-recipe.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every generated section and the committed file it is made from, relative to the repository. */
export const SECTIONS = {
  reproduction: 'docs/reproduction/reproduction.md',
  demo: 'public/models/storyteller-demo/hint-table.md',
  wishes: 'docs/reproduction/wishes.md',
  'wishes-opd': 'docs/reproduction/wishes-opd.md',
  'sampled-token': 'docs/reproduction/sampled-token.md',
  'forward-kl': 'docs/reproduction/forward-kl.md',
  'wishes-forward-kl': 'docs/reproduction/wishes-forward-kl.md',
  'forward-kl-copy': 'docs/reproduction/forward-kl-copy.md',
  'batch-16': 'docs/reproduction/batch-16.md',
  'deeper-model': 'docs/reproduction/deeper-model.md',
  'wishes-deep': 'docs/reproduction/wishes-deep.md',
  'lr-sweep': 'docs/reproduction/lr-sweep.md',
  bench: 'docs/bench/bench.json',
  accuracy: 'docs/bench/accuracy.json',
  paper: 'docs/bench/paper.json',
  serve: 'docs/bench/serve.json',
};

/** The pages that hold each section (the reproduction table is the README's headline too). */
export const SECTION_PAGES = {
  reproduction: ['README.md', 'docs/reproduction.md'],
  demo: ['docs/lab.md'],
  wishes: ['docs/reproduction.md'],
  'wishes-opd': ['docs/reproduction.md'],
  'sampled-token': ['docs/reproduction.md'],
  'forward-kl': ['docs/reproduction.md'],
  'wishes-forward-kl': ['docs/reproduction.md'],
  'forward-kl-copy': ['docs/reproduction.md'],
  'batch-16': ['docs/reproduction.md'],
  'deeper-model': ['docs/reproduction.md'],
  'wishes-deep': ['docs/reproduction.md'],
  'lr-sweep': ['docs/reproduction.md'],
  bench: ['docs/benchmarks.md'],
  accuracy: ['docs/benchmarks.md'],
  paper: ['docs/benchmarks.md'],
  serve: ['docs/serve.md'],
};

/** The sections of `sections` (name -> file) that `page` holds. */
export function sectionsOf(page, sections = SECTIONS) {
  return Object.fromEntries(Object.entries(sections).filter(([name]) => SECTION_PAGES[name].includes(page)));
}

/** The section's text made from `file`: a Markdown file as it is, a JSON file rendered. */
export function sectionBody(name, file) {
  const text = readFileSync(resolve(ROOT, file), 'utf8');
  if (!file.endsWith('.json')) return text.trim();
  const render = RENDERERS[name];
  if (!render) throw new Error(`no renderer makes section "${name}" from JSON; known: ${Object.keys(RENDERERS).join(', ')}`);
  return render(JSON.parse(text), file);
}

/** `readme` with the text between NAME's two markers replaced by `body`. */
export function replaceSection(readme, name, body) {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a)
    throw new Error(`the page has no ${start} ... ${end} section; add the two markers where the text belongs (SECTION_PAGES names the page).`);
  return `${readme.slice(0, a + start.length)}\n${body.trim()}\n${readme.slice(b)}`;
}

/** `readme` with every section of `sections` (name -> file) made from its file. */
export function generateReadme(readme, sections = SECTIONS) {
  return Object.entries(sections).reduce((text, [name, file]) => replaceSection(text, name, sectionBody(name, file)), readme);
}

// ---------------------------------------------------------------------------------------------
// The bench's JSON (bench/node/report.ts) as tables.

const isSkipped = (x) => typeof x === 'object' && x !== null && 'skipped' in x;

/** obj[path...], or an error naming the path when the field is missing. */
function need(obj, path, file) {
  let at = obj;
  for (const key of path) {
    if (at === null || typeof at !== 'object' || !(key in at)) {
      throw new Error(
        `${file} lacks ${path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}: the README's bench tables need it. Run the full bench again (npm run -s bench > ${file}).`,
      );
    }
    at = at[key];
    if (isSkipped(at)) return at;
  }
  return at;
}

/** A rate with 3-4 significant figures, as the bench logs them. */
function rate(x) {
  if (x >= 100) return String(Math.round(x));
  if (x >= 10) return x.toFixed(1);
  return x.toPrecision(3);
}

const times = (x) => `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`;
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

const BACKEND_TITLES = {
  'webgpu-chromium': 'the engine, WebGPU in Chromium',
  'webgpu-node': 'the engine, WebGPU in Dawn',
  'cpu-node': 'the engine, fast CPU in Node',
  'cpu-reference-node': 'the engine, CPU reference in Node',
  'transformers.js-webgpu': 'transformers.js, WebGPU',
  'transformers.js-wasm': 'transformers.js, WASM',
};

function benchSection(report, file) {
  const notMeasured = [];
  /** A cell's text, or "skipped" with the reason kept for the list under the tables. */
  const cell = (value, what, show) => {
    if (isSkipped(value)) {
      notMeasured.push(`${what}: ${value.skipped}`);
      return 'skipped';
    }
    return show(value);
  };
  const models = need(report, ['models'], file).filter((m) => !isSkipped(m));
  if (!models.some((m) => m.name === 'stories260K'))
    throw new Error(`${file} has no stories260K figures: the README's bench tables need them (data/models/stories260K).`);
  const batches = need(report, ['workload', 'batches'], file).map((b) => `b${b}`);
  const machine = need(report, ['machine'], file);
  const chromium = need(report, ['machine', 'chromium'], file);
  if (isSkipped(chromium))
    throw new Error(`${file} was made without the browser (${chromium.skipped}): the README's tables compare the engine with transformers.js in Chromium.`);
  const adapter = need(report, ['machine', 'chromium', 'webgpuAdapter'], file);
  const load = need(report, ['machine', 'load', 'loadAverage1m'], file);
  const contended = need(report, ['machine', 'load', 'contended'], file);
  const date = need(report, ['startedAt'], file).slice(0, 10);

  const pair = (c) => `${rate(c.prefillTokensPerS.median)} / ${rate(c.decodeTokensPerS.median)}`;
  const inference = (m, i, runner, group, b) => {
    const run = need(m, [group, runner], file);
    const what = `${m.name}, ${BACKEND_TITLES[runner]}, batch ${b.slice(1)}`;
    return cell(isSkipped(run) ? run : need(run, ['inference', b], file), what, pair);
  };

  const lines = [];
  const adapterName = `adapter \`${adapter.architecture || 'unknown'}\`${adapter.vendor ? ` by \`${adapter.vendor}\`` : ''}`;
  const peer = need(report, ['machine', 'chromium', 'peerRuntime'], file);
  const threads = need(report, ['machine', 'chromium', 'peerRuntime', 'ortWasmThreads'], file);
  lines.push(
    `Measured on ${date} by \`npm run bench\` (${need(report, ['mode'], file)} run, ${need(report, ['durationS'], file)} s) on a ` +
      `${machine.cpuCores}-core ${machine.cpuModel} with ${machine.memoryGiB} GiB and no GPU, load average ` +
      `${load.atStart} at the start${contended ? ' (other processes competed with the run)' : ''}. WebGPU there is a CPU emulator ` +
      `(${adapterName}, ${adapter.kernels} kernels, ${adapter.shaderF16 ? 'with' : 'no'} \`shader-f16\`) ` +
      `in headless Chromium ${chromium.version} and in Node through Dawn. An emulator's rates say nothing about a GPU's: ` +
      'read each figure against its peer measured in the same run, as the ratios do.',
    '',
    `Prefill / decode, tokens per second; the engine and transformers.js ${peer.transformers} on WebGPU in the same page on the same weights, ` +
      'and their ratio:',
    '',
    `| model | batch | engine, WebGPU | transformers.js, WebGPU | engine / transformers.js | engine, CPU in Node | transformers.js, WASM (${threads} thread${threads === 1 ? '' : 's'}) |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  models.forEach((m, i) => {
    for (const b of batches) {
      const ratio = need(m, ['ratios', 'engine webgpu-chromium / transformers.js-webgpu'], file);
      const r = isSkipped(ratio) ? ratio : need(ratio, [b], file);
      const ratioText = isSkipped(r) ? 'skipped' : `${times(r.prefill)} / **${times(r.decode)}**`;
      lines.push(
        `| ${m.name} | ${b.slice(1)} | ${inference(m, i, 'webgpu-chromium', 'engine', b)} | ${inference(m, i, 'transformers.js-webgpu', 'peer', b)} | ` +
          `${ratioText} | ${inference(m, i, 'cpu-node', 'engine', b)} | ${inference(m, i, 'transformers.js-wasm', 'peer', b)} |`,
      );
    }
  });
  const stories = models.find((m) => m.name === 'stories260K');
  const headline = need(stories, ['ratios', 'engine webgpu-chromium / transformers.js-webgpu'], file);
  if (isSkipped(headline) || batches.some((b) => isSkipped(need(headline, [b], file)))) {
    throw new Error(`${file}: stories260K's engine / transformers.js ratio on WebGPU was not measured; the README's tables need it.`);
  }

  const last = batches.at(-1);
  const [bFirst, bLast] = [batches[0].slice(1), last.slice(1)];
  lines.push(
    '',
    `Batching and training (one LoRA step: forward, backward and AdamW on ${need(report, ['workload', 'train', 'batch'], file)} sequences; ` +
      '"of prefill" is its rate over the same batch\'s prefill, mark 0.33; the work ratio is the step\'s projection and LM-head ' +
      "work over a prefill's, so 1 / work ratio is what equal FLOP rates would give):",
    '',
    `| model | where | decode, batch ${bLast} / batch ${bFirst} | training tokens/s | of prefill | work ratio | peak memory of a step |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const m of models) {
    for (const where of ['webgpu-chromium', 'webgpu-node']) {
      const run = need(m, ['engine', where], file);
      const what = `${m.name}, ${BACKEND_TITLES[where]}`;
      if (isSkipped(run)) {
        lines.push(`| ${m.name} | ${where === 'webgpu-chromium' ? 'Chromium' : 'Dawn'} | ${cell(run, what, () => '')} | | | | |`);
        continue;
      }
      const scaling = cell(need(run, ['decodeBatchScaling'], file), `${what}, batch scaling`, times);
      const training = need(run, ['training'], file);
      const t = isSkipped(training)
        ? [cell(training, `${what}, training`, () => ''), '', '', '']
        : [
            rate(need(training, ['tokensPerS', 'median'], file)),
            cell(need(training, ['ratioToPrefill'], file), `${what}, training / prefill`, (x) => x.toFixed(3)),
            need(training, ['workRatio'], file).toFixed(2),
            mib(need(training, ['peakBytes'], file)),
          ];
      lines.push(`| ${m.name} | ${where === 'webgpu-chromium' ? 'Chromium' : 'Dawn'} | ${scaling} | ${t.join(' | ')} |`);
    }
  }

  lines.push('', ...fastCpuLines(report, file, models, batches, cell));

  const matmul = (where) => cell(need(report, ['matmul', where], file), `matmul, ${where}`, (c) => `${c.gflops.median.toFixed(2)} GFLOP/s`);
  const mm = need(report, ['matmul', 'webgpu-node'], file);
  const n = isSkipped(mm) ? need(report, ['workload', 'matmulN'], file) : mm.n;
  lines.push('', `Matmul ${n}^3: ${matmul('webgpu-chromium')} in Chromium, ${matmul('webgpu-node')} in Dawn.`);
  const durability = need(report, ['storage', 'durability'], file);
  lines.push(
    '',
    cell(
      durability,
      'storage durability',
      (d) =>
        `Strict IndexedDB durability costs a training step ${d.extraMsPerStep.toFixed(1)} ms (${d.msPerStep.strict.median.toFixed(1)} ms strict, ` +
        `${d.msPerStep.default.median.toFixed(1)} ms at the browser's default, for ${d.turnsPerStep} turns and a ${mib(d.adapterBytes)} checkpoint).`,
    ),
  );
  if (notMeasured.length) lines.push('', 'Not measured in this run:', '', ...notMeasured.map((s) => `- ${s.replace(/\s+/g, ' ')}`));
  lines.push('', `Made by \`npm run -s bench > ${file}\` and \`node scripts/readme-section.mjs bench ${file}\`.`);
  return lines.join('\n');
}

/**
 * The fast CPU backend (bench/node/cpu.ts and the engine's cpu-node runs): its rates against
 * transformers.js on WASM and against the CPU reference, its batching and training, its matmul
 * against the machine's measured SIMD peak, and the training step's other ops.
 */
function fastCpuLines(report, file, models, batches, cell) {
  const cpu = need(report, ['cpu'], file);
  if (isSkipped(cpu)) return [cell(cpu, 'the fast CPU backend', () => '')];
  const ratio = (r) => (isSkipped(r) ? cell(r, 'a fast CPU ratio', () => '') : `${times(r.prefill)} / ${times(r.decode)}`);
  const [bFirst, bLast] = [batches[0].slice(1), batches.at(-1).slice(1)];
  const lines = [
    `The fast CPU backend in Node (${cpu.threads} threads), against transformers.js on WASM and against the CPU reference (the oracle) ` +
      `in the same run; prefill / decode ratios, then its batching and training as above:`,
    '',
    `| model | batch | engine / transformers.js, WASM | engine / CPU reference | decode, batch ${bLast} / batch ${bFirst} | training tokens/s | of prefill | work ratio |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const m of models) {
    const run = need(m, ['engine', 'cpu-node'], file);
    batches.forEach((b, k) => {
      const peer = need(m, ['ratios', 'engine cpu-node / transformers.js-wasm'], file);
      const ref = need(m, ['ratios', 'engine cpu-node / cpu-reference-node'], file);
      const at = (r) => (isSkipped(r) ? r : need(r, [b], file));
      let rest = ['', '', '', ''];
      if (k === 0 && !isSkipped(run)) {
        const training = need(run, ['training'], file);
        rest = [
          times(need(run, ['decodeBatchScaling'], file)),
          ...(isSkipped(training)
            ? [cell(training, `${m.name}, fast CPU training`, () => ''), '', '']
            : [
                rate(need(training, ['tokensPerS', 'median'], file)),
                need(training, ['ratioToPrefill'], file).toFixed(3),
                need(training, ['workRatio'], file).toFixed(2),
              ]),
        ];
      }
      lines.push(`| ${m.name} | ${b.slice(1)} | ${ratio(at(peer))} | ${ratio(at(ref))} | ${rest.join(' | ')} |`);
    });
  }
  const mm = need(cpu, ['matmul'], file);
  const peak = need(cpu, ['simdPeakGflopsPerCore'], file);
  const frac = need(cpu, ['fractionOfPeak'], file);
  lines.push(
    '',
    `Its matmul ${mm.oneThread.n}^3: ${mm.oneThread.gflops.median.toFixed(1)} GFLOP/s on one thread, ${mm.allThreads.gflops.median.toFixed(1)} GFLOP/s on ` +
      `${cpu.threads}, that is ${pct(frac.oneThread)} and ${pct(frac.allThreads)} of the peak that a SIMD multiply-add loop measures ` +
      `(${peak.toFixed(1)} GFLOP/s a core).`,
    '',
    "The training step's other ops, the same inputs on the CPU reference and on the fast backend (median ms):",
    '',
    `| op | shape | reference | fast, 1 thread | fast, ${cpu.threads} threads | speedup, ${cpu.threads} threads |`,
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const [name, op] of Object.entries(need(cpu, ['ops'], file))) {
    const ms = (x) => x.median.toFixed(3);
    lines.push(`| ${name} | ${op.shape} | ${ms(op.ms.reference)} | ${ms(op.ms.oneThread)} | ${ms(op.ms.allThreads)} | ${times(op.speedup.allThreads)} |`);
  }
  return lines;
}

const pct = (x) => `${(100 * x).toFixed(1)} %`;
const gib = (bytes) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

/** Where and when a report's figures were made, for the line above its tables. */
function machineLine(report, file, command) {
  const machine = need(report, ['machine'], file);
  const load = need(report, ['machine', 'load', 'loadAverage1m'], file);
  const contended = need(report, ['machine', 'load', 'contended'], file);
  return (
    `Measured on ${need(report, ['startedAt'], file).slice(0, 10)} by \`${command}\` (${need(report, ['durationS'], file)} s) on a ` +
    `${machine.cpuCores}-core ${machine.cpuModel} with ${machine.memoryGiB} GiB and no GPU, load average ${load.atStart} at the start` +
    `${contended ? ' (other processes competed with the run)' : ''}.`
  );
}

/** `npm run bench -- --only accuracy` (bench/node/accuracy.ts) as tables. */
function accuracySection(report, file) {
  const a = need(report, ['accuracy'], file);
  const targets = need(a, ['targets'], file);
  const seq = need(a, ['sequences'], file);
  const lines = [
    machineLine(report, file, 'npm run bench -- --only accuracy'),
    '',
    `Each format against the f32 engine on the same model, teacher-forced on ${seq.count} sequences of ${seq.tokens} tokens the f32 model ` +
      `sampled (temperature ${seq.temperature}, seed ${seq.seed}) after ${seq.prompts.length} story openings: the top-1 agreement (how often both ` +
      "predict the same next token), the mean absolute difference of the tokens' log-probs, and the bytes the weights take (norms and " +
      `biases f32). Targets: f16 ${pct(targets.f16)}, q8 ${pct(targets.q8)}, q4 ${pct(targets.q4)}.`,
    '',
    '| model | format | weights | top-1 agreement (CPU) | mean abs d log p | top-1 agreement (WebGPU, Dawn) |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const skipped = [];
  for (const [name, m] of Object.entries(need(a, ['models'], file))) {
    const cpu = m.cpu;
    if (isSkipped(cpu)) {
      skipped.push(`${name}: ${cpu.skipped}`);
      continue;
    }
    lines.push(`| ${name} | f32 | ${mib(cpu.f32WeightBytes)} | | | |`);
    for (const [format, f] of Object.entries(cpu.formats)) {
      if (isSkipped(f)) {
        skipped.push(`${name} ${format}: ${f.skipped}`);
        continue;
      }
      const gpu = isSkipped(m.webgpu) ? m.webgpu : m.webgpu.formats[format];
      const below = f.top1Agreement < targets[format] ? ' (below target)' : '';
      lines.push(
        `| ${name} | ${format} | ${mib(f.weightBytes)} | ${pct(f.top1Agreement)}${below} | ${f.meanAbsLogpDiff.toFixed(4)} | ${isSkipped(gpu) ? 'skipped' : pct(gpu.top1Agreement)} |`,
      );
    }
  }
  lines.push('', 'The 4-bit codecs q4 was chosen over, on the CPU (fake-quantized: f32 weights holding what the codec stores):', '');
  lines.push('| model | q4 (NF4, embedding and LM head q8) | NF4 on every matrix | Q4_0 on every matrix (the same bytes) |', '| --- | --- | --- | --- |');
  for (const [name, m] of Object.entries(need(a, ['models'], file))) {
    if (isSkipped(m.cpu) || isSkipped(m.cpu.formats.q4)) continue;
    const c = Object.values(need(m, ['cpu', 'codecs'], file));
    const show = (x) => `${pct(x.top1Agreement)}, ${x.meanAbsLogpDiff.toFixed(3)}`;
    lines.push(`| ${name} | ${show(m.cpu.formats.q4)} | ${show(c[0])} | ${show(c[1])} |`);
  }
  const planned = need(a, ['planned'], file);
  lines.push('', "Weight bytes the planner gives the paper's model sizes (`nextstate plan`):", '');
  const formats = Object.keys(Object.values(planned)[0]);
  lines.push(`| model | ${formats.join(' | ')} |`, `| --- | ${formats.map(() => '---').join(' | ')} |`);
  for (const [name, p] of Object.entries(planned)) lines.push(`| ${name} | ${formats.map((f) => gib(p[f].weightBytes)).join(' | ')} |`);
  if (skipped.length) lines.push('', 'Not measured in this run:', '', ...skipped.map((x) => `- ${x.replace(/\s+/g, ' ')}`));
  lines.push('', `Made by \`npm run -s bench -- --only accuracy > ${file}\` and \`node scripts/readme-section.mjs accuracy ${file}\`.`);
  return lines.join('\n');
}

/** `npm run bench -- --only paper` (bench/lib/paper.ts) as a table. */
function paperSection(report, file) {
  const p = need(report, ['paper'], file);
  const lines = [
    machineLine(report, file, 'npm run bench -- --only paper'),
    '',
    'A model of the real config with random weights generated straight into q4 (never an f32 copy), loaded, generating greedy tokens ' +
      'after a prompt, and one QLoRA step (rank 16 on every projection) on a short batch; memory as the engine counts its buffers, against the plan:',
    '',
    '| where | model | parameters | adapter | load | generate | QLoRA step | total | weights (measured / planned) | step peak (measured / planned) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const skipped = [];
  for (const [where, title] of [
    ['dawn', 'Node, Dawn'],
    ['chromium', 'headless Chromium'],
  ]) {
    const cell = need(p, [where], file);
    if (isSkipped(cell)) {
      skipped.push(`${title}: ${cell.skipped}`);
      continue;
    }
    const r = cell.run ?? cell;
    const s = r.seconds;
    const m = r.memory;
    lines.push(
      `| ${title}${cell.chromiumVersion ? ` ${cell.chromiumVersion}` : ''} | ${r.name} (${r.format}) | ${(r.parameters / 1e9).toFixed(2)} B | ` +
        `\`${r.adapter.architecture || 'unknown'}\` | ${s.load.toFixed(0)} s | ${s.generate.toFixed(0)} s (${r.generated.promptTokens} + ${r.generated.newTokens} tokens) | ` +
        `${s.trainStep.toFixed(0)} s (${r.trainStep.sequences} x ${r.trainStep.tokens} tokens) | ${r.totalMinutes.toFixed(1)} min | ` +
        `${gib(m.weights.measured)} / ${gib(m.weights.planned)} | ${gib(m.peak.measured)} / ${gib(m.peak.planned)} (${m.peak.ratio.toFixed(3)}) |`,
    );
  }
  if (skipped.length) lines.push('', 'Not measured in this run:', '', ...skipped.map((x) => `- ${x.replace(/\s+/g, ' ')}`));
  lines.push('', `Made by \`npm run -s bench -- --only paper > ${file}\` and \`node scripts/readme-section.mjs paper ${file}\`.`);
  return lines.join('\n');
}

/** `npm run bench -- --only serve` (bench/node/serve.ts) as a table. */
function serveSection(report, file) {
  const s = need(report, ['serve'], file);
  const command = `npm run bench -- --only serve${need(s, ['quick'], file) ? ' --quick' : ''}`;
  const lines = [
    machineLine(report, file, command),
    '',
    `\`nextstate serve\` on ${need(s, ['model'], file)} (${need(s, ['backend'], file)}), ${need(s, ['maxTokens'], file)} new tokens per reply, ` +
      'concurrent OpenAI clients on 127.0.0.1, each request a side turn (nothing judged or trained); batched: the generation batcher merges ' +
      'the requests that wait (--max-batch 32); one at a time: --max-batch 1:',
    '',
    '| clients | requests | batched: requests/s | p50 | p99 | one at a time: requests/s | p50 | p99 | batched / one at a time |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const batched = need(s, ['batched'], file);
  const single = need(s, ['oneAtATime'], file);
  batched.forEach((b, i) => {
    const o = single[i];
    lines.push(
      `| ${b.clients} | ${b.requests} | ${rate(b.requestsPerSecond)} | ${Math.round(b.p50Ms)} ms | ${Math.round(b.p99Ms)} ms | ` +
        `${rate(o.requestsPerSecond)} | ${Math.round(o.p50Ms)} ms | ${Math.round(o.p99Ms)} ms | ${need(s, ['ratio', String(b.clients)], file).toFixed(2)}x |`,
    );
  });
  const t = need(s, ['stepTtft'], file);
  const cell = (level) => `${level.requests} | ${Math.round(level.p50Ms)} ms | ${Math.round(level.p99Ms)} ms`;
  lines.push(
    '',
    `Time to first token while the trainer thread runs a step, beside outside one, in the same run of one server: an agent's corrections ` +
      `keep steps of ${t.batchSize} samples of ${t.trainedTokens}-token replies coming (${t.steps} steps, ${Math.round(t.stepMsP50)} ms each at the median), ` +
      'while a client streams short side turns one after another; a probe counts where it was both sent and first answered:',
    '',
    '| | probes | p50 | p99 |',
    '| --- | --- | --- | --- |',
    `| outside a step | ${cell(need(t, ['outside'], file))} |`,
    `| during a step | ${cell(need(t, ['duringStep'], file))} |`,
    '',
    `During / outside, p50: ${need(t, ['ratio'], file).toFixed(2)}x.`,
  );
  lines.push('', `Made by \`${command.replace('npm run', 'npm run -s')} > ${file}\` and \`node scripts/readme-section.mjs serve ${file}\`.`);
  return lines.join('\n');
}

const RENDERERS = { bench: benchSection, accuracy: accuracySection, paper: paperSection, serve: serveSection };

// ---------------------------------------------------------------------------------------------

function main(argv) {
  const [name, file] = argv;
  if (name && !file) {
    console.error('usage: node scripts/readme-section.mjs [NAME GENERATED_FILE]');
    process.exit(2);
  }
  if (name && !SECTION_PAGES[name]) {
    console.error(`no page holds a section "${name}"; known: ${Object.keys(SECTION_PAGES).join(', ')}`);
    process.exit(2);
  }
  const sections = name ? { [name]: file } : SECTIONS;
  const pages = [...new Set(Object.keys(sections).flatMap((n) => SECTION_PAGES[n]))];
  for (const page of pages) {
    const path = join(ROOT, page);
    const mine = sectionsOf(page, sections);
    try {
      writeFileSync(path, generateReadme(readFileSync(path, 'utf8'), mine));
    } catch (e) {
      console.error(e.message);
      process.exit(1);
    }
    for (const [n, f] of Object.entries(mine)) console.log(`${page}: section "${n}" now holds ${f}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main(process.argv.slice(2));
