/**
 * `npm run bench -- --only hostile`: every hostile input of the second security review, each given
 * to the real `nextstate` bin in a process of its own, with its wall time (start-up included) and
 * peak resident memory (bench/node/peak-rss.mjs reads it at exit). The goal the README states:
 * each refused in one line, in under 20 s and under 1.5 GB. A process still running after
 * TIMEOUT_MS is killed and reported as such.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, closeSync, ftruncateSync, openSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { main } from '../../src/cli/main';
import { parseModelConfig } from '../../src/models/config';
import { CpuBackend } from '../../src/gpu/cpu/backend';
import { LoraAdapter } from '../../src/gpu/lora';
import { adapterToPeft, PEFT_CONFIG, PEFT_WEIGHTS } from '../../src/gpu/peft';
import { parseSafetensors, tensorToFloat32, writeSafetensors } from '../../src/models/safetensors';
import { exampleConfig, type RunConfig } from '../../src/runtime/run-config';
import { memorySource, runFileStream } from '../../src/storage/runfile';
import { sampleRun } from '../../test/support/storage/fixtures';
import { resolveDataPath } from '../../test/data-dir';
import { wireSuite } from './hostile-wire';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(here, '../../bin/nextstate.mjs');
const PEAK = pathToFileURL(join(here, 'peak-rss.mjs')).href;
const TIMEOUT_MS = 60_000;
/** The review's goal for each refusal. */
export const GOAL = { seconds: 20, bytes: 1.5e9 };

interface Case {
  name: string;
  /** What the review found, in its words. */
  before: string;
  argv: string[];
}

export interface HostileResult {
  name: string;
  before: string;
  command: string;
  exitCode: number | null;
  seconds: number;
  peakRssMB: number | null;
  /** The refusal: stderr's first line. */
  refusal: string;
  /** Whether stderr was that one line (and, for a usage error, the usage after it). */
  oneLine: boolean;
  withinGoal: boolean;
}

function measure(c: Case, work: string): Promise<HostileResult> {
  const peakFile = join(work, `peak-${c.name}`);
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', PEAK, BIN, ...c.argv], {
      env: { ...process.env, NEXTSTATE_PEAK_RSS_FILE: peakFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      let peak: number | null = null;
      try {
        peak = Number(readFileSync(peakFile, 'utf8'));
      } catch {
        // Killed: no exit handler ran.
      }
      const lines = stderr.trimEnd().split('\n');
      const oneLine = lines[0].startsWith('nextstate ') && (lines.length === 1 || lines[1].startsWith('usage: '));
      done({
        name: c.name,
        before: c.before,
        command: `nextstate ${c.argv.map((a) => a.replace(work, '$TMP')).join(' ')}`,
        exitCode: code,
        seconds: Number(seconds.toFixed(2)),
        peakRssMB: peak === null ? null : Math.round(peak / 1e6),
        refusal: lines[0].replaceAll(work, '$TMP'),
        oneLine,
        withinGoal: code !== 0 && code !== null && oneLine && seconds < GOAL.seconds && peak !== null && peak < GOAL.bytes,
      });
    });
  });
}

/** stories260K with `change` applied to its copy. */
function modelCopy(work: string, name: string, stories: string, change: (dir: string) => void): string {
  const dir = join(work, name);
  cpSync(stories, dir, { recursive: true });
  change(dir);
  return dir;
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const write = (file: string, value: unknown) => writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));

function rewriteWeights(file: string, change: (t: { name: string; shape: number[]; data: Float32Array }) => void, metadata?: Record<string, string>): void {
  const parsed = parseSafetensors(readFileSync(file));
  const out = [...parsed.tensors.values()].map((t) => ({ name: t.name, shape: t.shape, data: tensorToFloat32(t) }));
  out.forEach(change);
  writeFileSync(file, writeSafetensors(out, { ...parsed.metadata, ...metadata }));
}

/** Builds every hostile input in `work` and lists the commands that meet them. */
async function cases(work: string, port: number): Promise<Case[]> {
  const stories = resolveDataPath('models/stories260K');
  const data = join(work, 'data.jsonl');
  write(data, JSON.stringify({ prompt: 'Once upon a time', completion: ' there was a cat.', advantage: 1 }));
  const out = (n: string) => join(work, `out-${n}`);
  const replace = (dir: string, name: string, make: (p: string) => void) => {
    rmSync(join(dir, name));
    make(join(dir, name));
  };
  const fifo = (p: string) => execFileSync('mkfifo', [p]);
  const devZero = (p: string) => symlinkSync('/dev/zero', p);

  const zeroConfig = modelCopy(work, 'zero-config', stories, (d) => replace(d, 'config.json', devZero));
  const fifoConfig = modelCopy(work, 'fifo-config', stories, (d) => replace(d, 'config.json', fifo));
  const wideHeader = modelCopy(work, 'wide-header', stories, (d) => {
    const entries = Array.from({ length: 1_280_000 }, (_, i) => `"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`).join(',');
    const header = new TextEncoder().encode(`{${entries}}`);
    const file = new Uint8Array(8 + header.byteLength);
    new DataView(file.buffer).setBigUint64(0, BigInt(header.byteLength), true);
    file.set(header, 8);
    writeFileSync(join(d, 'model.safetensors'), file);
  });
  const withTemplate = (name: string, template: string) =>
    modelCopy(work, name, stories, (d) => write(join(d, 'tokenizer_config.json'), { ...json(join(d, 'tokenizer_config.json')), chat_template: template }));
  const loop100M = withTemplate('template-100m', '{% for i in range(100000000) %}{{ messages[0].content }}{% endfor %}');
  const nested = withTemplate('template-nested', '{% set xs = range(100000) %}{% for i in xs %}{% for j in xs %}{% endfor %}{% endfor %}');
  const huge = modelCopy(work, 'weights-3e38', stories, (d) =>
    rewriteWeights(join(d, 'model.safetensors'), (t) => t.name === 'model.layers.2.mlp.up_proj.weight' && t.data.fill(3e38)),
  );
  /** stories260K's config.json with `patch`, as a file of its own; `text` rewrites its JSON (1e999 has no JSON.stringify). */
  const withConfig = (name: string, patch: Record<string, unknown>, text = (t: string) => t) => {
    const file = join(work, `${name}.json`);
    write(file, text(JSON.stringify({ ...json(join(stories, 'config.json')), ...patch })));
    return file;
  };

  // An adapter whose lora_alpha of 1e38 overflows the q projection.
  const adapter = join(work, 'adapter-1e38');
  mkdirSync(adapter);
  const be = new CpuBackend();
  const lora = LoraAdapter.init(be, parseModelConfig(json(join(stories, 'config.json'))), { rank: 4, alpha: 1e38, targets: ['q_proj'] }, 1);
  for (const pair of lora.pairs.values()) pair.B = be.tensor(new Float32Array(pair.B.shape[0] * pair.B.shape[1]).fill(1000), pair.B.shape);
  const peft = await adapterToPeft(be, lora, stories);
  writeFileSync(join(adapter, PEFT_WEIGHTS), peft[PEFT_WEIGHTS]);
  writeFileSync(join(adapter, PEFT_CONFIG), peft[PEFT_CONFIG]);

  // A folder train --full wrote, and copies with hostile optimizer states.
  const trained = join(work, 'trained');
  const code = await main(
    ['train', '--full', '--model', stories, '--data', data, '--out', trained, '--steps', '1', '-q'],
    () => {},
    () => {},
  );
  if (code !== 0) throw new Error('the hostile bench could not train its starting folder');
  const optimizer = (name: string, change: (t: { name: string; data: Float32Array }) => void, metadata?: Record<string, string>) => {
    const dir = join(work, name);
    cpSync(trained, dir, { recursive: true });
    rewriteWeights(join(dir, 'optimizer.safetensors'), change, metadata);
    return dir;
  };
  const negative = optimizer('optimizer-negative', (t) => t.name.endsWith('.exp_avg_sq') && t.data.fill(-1));
  const farStep = optimizer('optimizer-step', () => {}, { step: '100000000000000000000' });
  const fifoOptimizer = modelCopy(work, 'optimizer-fifo', trained, (d) => replace(d, 'optimizer.safetensors', fifo));

  const runConfig = (name: string, change: (c: RunConfig) => void) => {
    const config = exampleConfig('storyteller', stories, 'binary');
    change(config);
    const file = join(work, `${name}.json`);
    write(file, config);
    return file;
  };
  const sessions = runConfig('sessions-1e8', (c) => (c.schedule.concurrentSessions = 1e8));
  const overflowRun = runConfig('run-3e38', (c) => {
    c.models.policy.model = huge;
    c.schedule = { ...c.schedule, steps: 1, evalEvery: 0 };
  });
  const prompt5MB = join(work, 'prompt-5mb.jsonl');
  write(prompt5MB, JSON.stringify({ prompt: 'x'.repeat(5_000_000), completion: ' y', advantage: 1 }));
  const sparse = join(work, 'sparse.jsonl');
  const fd = openSync(sparse, 'w');
  ftruncateSync(fd, 1_500_000_000);
  closeSync(fd);

  const runFile = join(work, 'run.nsrun');
  const source = memorySource(
    { config: exampleConfig('storyteller', stories, 'binary'), label: 'hostile', notes: '', created: 1_000, status: 'finished' },
    sampleRun(),
  );
  writeFileSync(runFile, new Uint8Array(await new Response(runFileStream(source)).arrayBuffer()));
  const precious = join(work, 'precious.txt');
  write(precious, 'precious');
  const linkToPrecious = join(work, 'records-link.jsonl');
  symlinkSync(precious, linkToPrecious);
  const outLink = join(work, 'out-link');
  symlinkSync(work, outLink);

  const url = `http://127.0.0.1:${port}`;
  return [
    {
      name: 'config-dev-zero-generate',
      before: 'config.json as a symlink to /dev/zero used 11 GB in 30 s (generate)',
      argv: ['generate', '--model', zeroConfig, '--prompt', 'x'],
    },
    { name: 'config-dev-zero-plan', before: 'config.json as a symlink to /dev/zero used 4.4 GB in 8 s (plan)', argv: ['plan', '--model', zeroConfig] },
    { name: 'config-fifo-generate', before: 'a FIFO config.json hangs generate', argv: ['generate', '--model', fifoConfig, '--prompt', 'x'] },
    { name: 'config-fifo-plan', before: 'a FIFO config.json hangs plan', argv: ['plan', '--model', fifoConfig] },
    {
      name: 'optimizer-fifo',
      before: 'a FIFO hangs train --resume',
      argv: ['train', '--full', '--resume', '--model', fifoOptimizer, '--data', data, '--out', out('fifo')],
    },
    {
      name: 'data-dev-zero',
      before: '--data /dev/zero reached 6.6 GB in 20 s',
      argv: ['train', '--model', stories, '--data', '/dev/zero', '--out', out('zero')],
    },
    { name: 'data-sparse-1.5GB', before: 'a file of any size was read whole', argv: ['train', '--model', stories, '--data', sparse, '--out', out('sparse')] },
    { name: 'run-config-dev-zero', before: 'run --config /dev/zero reached 12.5 GB in 20 s', argv: ['run', '--config', '/dev/zero'] },
    { name: 'url-endless-config', before: 'an endless config.json from a local URL reached 4.5 GB in 15 s', argv: ['plan', '--model', `${url}/endless`] },
    {
      name: 'url-content-length-1e12',
      before: 'a Content-Length of 1e12 was preallocated ("Invalid typed array length")',
      argv: ['plan', '--model', `${url}/liar`],
    },
    {
      name: 'concurrent-sessions-1e8',
      before: 'schedule.concurrentSessions 1e8 printed nothing in 90 s and reached 3.2 GB',
      argv: ['run', '--config', sessions],
    },
    {
      name: 'safetensors-1.28M-entries',
      before: 'a 103 MB header of 1.28 M empty tensors took 13 s and 1.67 GB',
      argv: ['generate', '--model', wideHeader, '--prompt', 'x'],
    },
    {
      name: 'prompt-5MB',
      before: 'a 5 MB --data prompt was tokenized (60 s or more, 2.1 GB) before the 512-position check',
      argv: ['train', '--model', stories, '--data', prompt5MB, '--out', out('prompt')],
    },
    {
      name: 'chat-template-100M-loop',
      before: 'a 200-byte chat_template looping 100 M times took more than 4 GB in 60 s',
      argv: ['generate', '--model', loop100M, '--prompt', 'x', '--chat'],
    },
    { name: 'chat-template-nested-1e10', before: 'nested loops of 1e10 pin a core', argv: ['generate', '--model', nested, '--prompt', 'x', '--chat'] },
    {
      name: 'weights-3e38-generate',
      before: 'finite weights of 3e38: generate exits 0 with logprobs null',
      argv: ['generate', '--model', huge, '--prompt', 'Once upon a time', '--json'],
    },
    {
      name: 'weights-3e38-score',
      before: 'finite weights of 3e38: score exits 0 with logprobs null',
      argv: ['score', '--model', huge, '--prompt', 'Once upon a time', '--completion', ' there', '--json'],
    },
    {
      name: 'weights-3e38-run',
      before: 'run dies with "token id -1 is outside the vocabulary"',
      argv: ['run', '--config', overflowRun, '--out', join(work, 'overflow.nsrun')],
    },
    {
      name: 'lora-alpha-1e38-score',
      before: "an adapter's lora_alpha of 1e38: score exits 0 with logprobs null",
      argv: ['score', '--model', stories, '--adapter', adapter, '--prompt', 'Once upon a time', '--completion', ' there'],
    },
    {
      name: 'optimizer-exp-avg-sq-negative',
      before: 'every exp_avg_sq at -1: exit 0 and all 47 tensors NaN',
      argv: ['train', '--full', '--resume', '--model', negative, '--data', data, '--out', out('negative')],
    },
    {
      name: 'optimizer-step-1e20',
      before: 'an optimizer step of 1e20 was accepted',
      argv: ['train', '--full', '--resume', '--model', farStep, '--data', data, '--out', out('step')],
    },
    {
      name: 'out-equals-model',
      before: 'with --out equal to --model the original weights were overwritten',
      argv: ['train', '--full', '--resume', '--model', trained, '--data', data, '--out', trained],
    },
    {
      name: 'train-out-symlink',
      before: 'train --full --out wrote through symlinks',
      argv: ['train', '--full', '--model', stories, '--data', data, '--out', outLink],
    },
    { name: 'export-records-symlink', before: 'export wrote through symlinks', argv: ['export', runFile, '--records', linkToPrecious, '--force'] },
    { name: 'export-records-existing', before: 'export overwrote existing files silently', argv: ['export', runFile, '--records', precious] },
    {
      name: 'architectures-constructor',
      before: 'architectures ["constructor"] passed the architecture check',
      argv: ['plan', '--model', withConfig('arch-constructor', { architectures: ['constructor'] })],
    },
    { name: 'rms-norm-eps-1e300', before: 'rms_norm_eps 1e300 was accepted', argv: ['plan', '--model', withConfig('eps-1e300', { rms_norm_eps: 1e300 })] },
    { name: 'rope-theta-1e-300', before: 'rope_theta 1e-300 was accepted', argv: ['plan', '--model', withConfig('theta-1e-300', { rope_theta: 1e-300 })] },
    {
      name: 'rms-norm-eps-1e999',
      before: 'rms_norm_eps 1e999 was refused as "found null"',
      argv: ['plan', '--model', withConfig('eps-1e999', { rms_norm_eps: 0 }, (t) => t.replace('"rms_norm_eps":0', '"rms_norm_eps":1e999'))],
    },
    ...journalCases(work, stories),
  ];
}

/** Serve journals the reader must refuse in one line, before any model loads. */
function journalCases(work: string, stories: string): Case[] {
  const journal = (name: string, make: (path: string) => void) => {
    const file = join(work, `${name}.nsrun`);
    make(`${file}.journal`);
    return file;
  };
  const header = JSON.stringify({ config: exampleConfig('storyteller'), label: 'hostile', created: 1 }) + '\n';
  const overCap = journal('journal-over-cap', (p) => {
    writeFileSync(p, header);
    const fd = openSync(p, 'r+');
    ftruncateSync(fd, 1_100_000_000);
    closeSync(fd);
  });
  const longLine = journal('journal-long-line', (p) => writeFileSync(p, header + ' '.repeat(17_000_000) + '\n'));
  // A served turn whose tool schema nests 100,000 levels: a valid record, as a client without the wire's depth check could have had journaled.
  const deep = `{"kind":"interaction","version":0,"ts":1,"session":"s0","turn":1,"turnType":"main","messages":[],"response":"","tokenIds":[],"logprobs":[],"startedAt":1,"finishedAt":1,"tools":[${'{"p":'.repeat(100_000)}{}${'}'.repeat(100_000)}]}`;
  const deepLine = journal('journal-deep-line', (p) => writeFileSync(p, header + deep + '\n'));
  return [
    { name: 'journal-1.1GB', before: 'a journal over 512 MiB could not be read', argv: ['serve', '--model', stories, '--out', overCap, '--resume'] },
    { name: 'journal-line-17MB', before: 'read whole into one string', argv: ['serve', '--model', stories, '--out', longLine, '--resume'] },
    {
      name: 'journal-line-100000-deep',
      before:
        'read on resume with no depth check, though rewriting the run file from it overflows the stack (JSON.stringify) and the run file reader refuses it',
      argv: ['serve', '--model', stories, '--out', deepLine, '--resume'],
    },
  ];
}

/** Every case, one process each, in order; the start-up of a bare command for reference. */
export async function hostileSuite(log: (line: string) => void): Promise<Record<string, unknown>> {
  const work = mkdtempSync(join(tmpdir(), 'nextstate-hostile-bench-'));
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/liar/')) {
      res.writeHead(200, { 'content-length': String(1e12) });
      res.end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const pump = () => {
      while (res.write(chunk));
    };
    res.on('drain', pump);
    pump();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const list = await cases(work, (server.address() as { port: number }).port);
    const startup = await measure({ name: 'startup', before: '', argv: ['--version'] }, work);
    log(`start-up alone: ${startup.seconds} s, ${startup.peakRssMB} MB`);
    const results: HostileResult[] = [];
    for (const c of list) {
      const r = await measure(c, work);
      log(`${r.withinGoal ? 'ok  ' : 'MISS'} ${r.name}: exit ${r.exitCode}, ${r.seconds} s, ${r.peakRssMB} MB: ${r.refusal}`);
      results.push(r);
    }
    const worst = (key: 'seconds' | 'peakRssMB') => Math.max(...results.map((r) => r[key] ?? Infinity));
    const wire = await wireSuite(work, log);
    return {
      hostile: {
        wire,
        goal: { seconds: GOAL.seconds, peakRssMB: GOAL.bytes / 1e6, oneLine: true },
        startup: { seconds: startup.seconds, peakRssMB: startup.peakRssMB },
        cases: results.length,
        withinGoal: results.filter((r) => r.withinGoal).length,
        maxSeconds: worst('seconds'),
        maxPeakRssMB: worst('peakRssMB'),
        results,
      },
    };
  } finally {
    server.closeAllConnections();
    server.close();
    rmSync(work, { recursive: true, force: true });
  }
}
