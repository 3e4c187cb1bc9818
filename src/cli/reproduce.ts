/**
 * `nextstate reproduce`: the paper's comparison as an experiment. For every seed it runs every
 * trained arm (the three methods, the shuffled-hint control and, on the storyteller, the
 * other-child control) from the same config, writes
 * their run files, and builds the tables and chart of the personalization score from their
 * evaluation records: means with 95 % bootstrap intervals, and paired differences. The base arm
 * is each seed's untrained policy, the step-0 evaluation every run starts from. `--wishes` repeats
 * it over wish combinations, `--lr` sweeps learning rates on the training openings. DIR is the
 * experiment's working folder: a finished run is kept beside its run file (.scores.json) and
 * reused while its config is unchanged, an interrupted one (its journal there, no scores) goes on
 * from its last checkpoint with `run --resume`, and one whose config changed runs again from the
 * start, so an interrupted experiment continues where it stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { FILE_LIMITS, InputFileError, readLocalText } from '../models/local-file';
import { portableModelName } from '../models/source';
import { shellWord } from '../base/shell-word';
import { join } from 'node:path';
import { configForArm, parseRunConfig, type RunConfig } from '../runtime/run-config';
import { DEFAULT_TRAINED_ARMS, isArm, OTHER_CHILD_ARMS, type TrainedArm } from '../runtime/arms';
import { hintSourceOf } from '../rl/presets';
import { childMentionRates, normaliseChild, otherChildFor, type ChildWishes } from '../sims/scenarios/index';
import { isPositiveInt, list, number, parse, required, UsageError } from './args';
import { CPU_THREADS_ENV, threadsPerProcess } from '../gpu/cpu-fast/threads-node';
import { BACKEND_USAGE, backendOption } from './engine';
import { SET_NOTE, SET_OPTION, SET_USAGE, applySets, setValues } from './overrides';
import {
  reproductionMarkdown,
  reproductionSvg,
  reproductionTable,
  OTHER_NAME,
  OTHER_PET,
  sweepMarkdown,
  sweepTable,
  wishMarkdown,
  wishRatesMarkdown,
  wishRatesTable,
  wishTable,
  type RunScores,
} from './reproduce-report';
import { resumeRunFile, runToFile } from './run';
import { journalPath, readJournal, RunJournal } from '../runtime/run-journal';
import { lastResume } from '../runtime/resume-plan';
import type { RunRecord } from '../rl/records';
import { timeLeft, type CliIo } from './io';
import { progressFor } from './load-progress';
import { notStdout } from './output';
import { Interrupted, signalExitCode, STOP_SIGNALS, stoppable, type StopSignal } from './signals';

/** Seeds a reproduction runs unless told: ten, so that an interval means something. */
export const DEFAULT_SEEDS = Array.from({ length: 10 }, (_, i) => i + 1);

export const usage = `nextstate reproduce --config RUN.json --out DIR [--seeds 1,...,10] [--steps 16] [--eval-every 8]
    [--methods ${['base', ...DEFAULT_TRAINED_ARMS].join(',')}] [--jobs N] [--policy DIR|ID] ${BACKEND_USAGE} [--json]
    [--wishes SUBJECT/NAME/THING,...] [--lr RATE,...] ${SET_USAGE}
  Runs every arm for every seed; writes DIR/<arm>-seed<N>.nsrun, DIR/reproduction.json, .md and
  .svg (means with 95 % bootstrap intervals, paired differences, and the storyteller's per-wish
  rates where its evaluations carry them). --methods may also name ${OTHER_CHILD_ARMS.join(' and ')}
  (a storyteller's only): OPD and Combined on the hints written for another child. --wishes
  runs the arms for each storyteller wish combination (DIR/wishes.json, .md); --lr runs each arm
  at each learning rate, scored on the training openings (DIR/lr-sweep.json, .md). --jobs runs
  that many at once, each in its own process. DIR is the experiment's working folder, never
  refused: a run already finished with the same config is reused, one interrupted is resumed from
  its last checkpoint, one whose config changed runs again; after Ctrl-C (exit 130) or SIGTERM
  (143) the same command continues where it stopped. The reports in DIR are rewritten each time.
  ${SET_NOTE}; every arm's config takes it.`;

/**
 * The command the reports say they were made by: every option that changes a result, --policy
 * named as portableModelName names it (a folder by its last segment, never a local path).
 */
export function madeByCommand(
  file: string,
  o: {
    seeds: number[];
    steps: number;
    evalEvery: number;
    arms: string[];
    wishes: Wishes[] | null;
    lrs: number[] | null;
    policy?: string;
    backend?: string;
    sets?: readonly string[];
  },
): string {
  const flags = [`--seeds ${o.seeds.join(',')}`, `--steps ${o.steps}`, `--eval-every ${o.evalEvery}`, `--methods ${o.arms.join(',')}`];
  if (o.wishes) flags.push(`--wishes ${o.wishes.map((w) => `${w.subject}/${w.name}/${w.favourite}`).join(',')}`);
  if (o.lrs) flags.push(`--lr ${o.lrs.join(',')}`);
  if (o.policy !== undefined) flags.push(`--policy ${portableModelName(o.policy)}`);
  if (o.backend !== undefined) flags.push(`--backend ${shellWord(o.backend)}`);
  for (const entry of o.sets ?? []) flags.push(`--set ${shellWord(entry)}`);
  return `nextstate reproduce --config ${file} ${flags.join(' ')}`;
}

interface Wishes {
  subject: string;
  name: string;
  favourite: string;
}

function parseWishes(item: string): Wishes | null {
  const parts = item.split('/').map((s) => s.trim());
  if (parts.length !== 3 || parts.some((p) => !p)) return null;
  return { subject: parts[0], name: parts[1], favourite: parts[2] };
}

/** One run of the experiment: where it writes, and what it adds to the report. */
interface Job {
  config: RunConfig;
  file: string;
  scores: Omit<RunScores, 'scores'>;
}

/** The evaluation scores of a finished run of `job`, from its .scores.json when the config matches. */
function cached(job: Job): RunScores['scores'] | null {
  const at = `${job.file}.scores.json`;
  if (!existsSync(at)) return null;
  try {
    const kept = JSON.parse(readLocalText(at, FILE_LIMITS.report)) as { config: unknown; scores: RunScores['scores'] };
    return JSON.stringify(kept.config) === JSON.stringify(job.config) ? kept.scores : null;
  } catch {
    return null;
  }
}

/** The config a job's run was started with, beside its run file: what tells its journal is this job's. */
const configPath = (job: Job) => `${job.file}.config.json`;

/** The other child whose hints an other-child run's teacher read, drawn as the run drew it (its records name it in `hintFor`); null for any other run. */
function otherChildOf(config: RunConfig): ChildWishes | null {
  if (hintSourceOf(config.preset) !== 'other-child' || config.scenario.id !== 'storyteller') return null;
  return otherChildFor(normaliseChild(config.scenario), config.seed);
}

/**
 * The evaluation scores a run's records hold, each with the rates its scores carry beside the
 * score (a storyteller's per-wish rates) and, for an other-child run of `config`, how often its
 * evaluation stories name the other child's pet and name.
 */
function scoresOf(records: readonly RunRecord[], config: RunConfig): RunScores['scores'] {
  const other = otherChildOf(config);
  return records.flatMap((r) => {
    if (r.kind !== 'evaluation') return [];
    const rates: Record<string, number> = Object.fromEntries(Object.entries(r.scores).filter(([key]) => key !== 'score'));
    const stories = r.perProblem.flatMap((p) => (p.detail !== undefined ? [p.detail] : []));
    if (other && stories.length) {
      const named = childMentionRates(stories, other);
      rates[OTHER_PET] = named.pet;
      rates[OTHER_NAME] = named.name;
    }
    return [{ step: r.step ?? 0, score: r.scores.score, ...(Object.keys(rates).length ? { rates } : {}) }];
  });
}

/**
 * The records of `job`'s interrupted run, to resume: its journal is there and was started with
 * this config. Null when there is none, it is damaged, or its config differs.
 */
function interrupted(job: Job): readonly RunRecord[] | null {
  if (!existsSync(journalPath(job.file)) || !existsSync(configPath(job))) return null;
  try {
    if (readLocalText(configPath(job), FILE_LIMITS.runConfig) !== JSON.stringify(job.config, null, 2)) return null;
    return readJournal(journalPath(job.file)).records;
  } catch {
    return null;
  }
}

/** Whether a run's records hold all its steps and the evaluation after the last. */
function complete(records: readonly RunRecord[], steps: number): boolean {
  return records.some((r) => r.kind === 'train_step' && r.step === steps) && records.some((r) => r.kind === 'evaluation' && (r.step ?? 0) === steps);
}

/** How one run ended: its evaluation scores, and the signal that stopped it early, if one did. */
interface Ran {
  status: string;
  scores: RunScores['scores'];
  signal?: StopSignal;
  /** A resumed run's line on what the resume did (its first record's). */
  resumed?: string;
}

/** What `records` of a run that ended say: its scores, and what its resume did where `resume`. */
function ranFrom(records: readonly RunRecord[], job: Job, resume: boolean): Pick<Ran, 'scores' | 'resumed'> {
  const marker = resume ? lastResume(records) : undefined;
  return { scores: scoresOf(records, job.config), ...(marker ? { resumed: marker.message } : {}) };
}

/** Runs `job` here, in this process; `resume`: from its journal. */
async function runHere(job: Job, resume: boolean, io: CliIo): Promise<Ran> {
  const loadProgress = progressFor(io);
  const { status, records, signal } = resume ? await resumeRunFile(job.file, { loadProgress }) : await runToFile(job.config, { file: job.file, loadProgress });
  return { status, ...ranFrom(records, job, resume), ...(signal ? { signal } : {}) };
}

/** Runs `job` in a child `nextstate run --json` (`--resume` from its journal); its scores are read from the journal it leaves. */
function runInChild(job: Job, children: Set<ChildProcess>, resume: boolean, parallel: number): Promise<Ran> {
  const args = resume ? ['--resume', job.file] : ['--config', configPath(job), '--out', job.file];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1], 'run', ...args, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The runs side by side share the cores, unless the person chose a thread count.
      env: { [CPU_THREADS_ENV]: String(threadsPerProcess(parallel)), ...process.env },
      // Its own process group: a terminal's Ctrl-C reaches it once, forwarded by this process,
      // not twice (a second SIGINT would kill it before it writes its run file).
      detached: true,
    });
    children.add(child);
    let stderr = '';
    // Its event lines are read from the journal once it ends (a resumed run's earlier ones are only there).
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code, killedBy) => {
      children.delete(child);
      // A child still loading its model has no handler yet, and the signal kills it outright.
      const signal = STOP_SIGNALS.find((s) => signalExitCode(s) === code || s === killedBy);
      if (signal) resolve({ status: 'stopped', scores: [], signal });
      else if (code !== 0) reject(new Error(`the run for ${job.file} exited with code ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`));
      else resolve({ status: 'finished', ...ranFrom(readJournal(journalPath(job.file)).records, job, resume) });
    });
  });
}

/**
 * Runs the jobs, `parallel` at a time, reusing finished ones; one line per run (a JSON line on
 * stdout with --json, progress otherwise). SIGINT or SIGTERM stops the runs under way, each
 * writing its run file, starts no more, and ends in Interrupted.
 */
async function runJobs(jobs: readonly Job[], parallel: number, json: boolean, io: CliIo): Promise<RunScores[]> {
  const results: RunScores[] = new Array(jobs.length);
  const children = new Set<ChildProcess>();
  let signal: StopSignal | undefined;
  let next = 0;
  let done = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < jobs.length && !signal) {
      const i = next++;
      const job = jobs[i];
      const t0 = Date.now();
      let scores = cached(job);
      const reused = scores !== null;
      let resumed = false;
      const last = job.config.schedule.steps;
      const before = reused ? null : interrupted(job);
      if (before && complete(before, last)) scores = scoresOf(before, job.config);
      else if (!scores) {
        // A run without its scores did not finish: it goes on from its journal, or, started with
        // another config (or none to tell), runs again from the start.
        resumed = before !== null;
        if (!resumed) {
          RunJournal.remove(job.file);
          writeFileSync(configPath(job), JSON.stringify(job.config, null, 2));
        }
        const ran = await (parallel > 1 ? runInChild(job, children, resumed, parallel) : runHere(job, resumed, io));
        if (ran.signal) {
          signal ??= ran.signal;
          return;
        }
        if (ran.resumed) io.note(`${job.file}: ${ran.resumed}`);
        const { status, scores: got } = ran;
        if (status !== 'finished' || !got.some((s) => s.step === last))
          throw new Error(`the run for ${job.file} did not finish its ${last} steps; see that file`);
        scores = got;
      }
      if (!reused) writeFileSync(`${job.file}.scores.json`, `${JSON.stringify({ config: job.config, scores })}\n`);
      results[i] = { ...job.scores, scores };
      const seconds = (Date.now() - t0) / 1000;
      const label = [job.scores.arm, job.scores.wishes, job.scores.lr !== undefined ? `lr ${job.scores.lr}` : '', `seed ${job.scores.seed}`]
        .filter(Boolean)
        .join(', ');
      done++;
      if (json) io.out(JSON.stringify({ type: 'run', ...job.scores, scores, file: job.file, seconds, reused, resumed }));
      else
        io.progress(
          `run ${done} of ${jobs.length}, ${label}: ${scores.map((s) => `${s.step}:${s.score.toFixed(3)}`).join(' -> ')} (${reused ? 'reused' : `${resumed ? 'resumed, ' : ''}${seconds.toFixed(0)} s`}, ${job.file})${timeLeft(started, done, jobs.length)}`,
        );
    }
  };
  // In this process the run loop catches the signal itself; children are sent it.
  const stop = (got: StopSignal) => {
    signal ??= got;
    for (const child of children) child.kill(got);
  };
  await stoppable(stop, () => Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, jobs.length)) }, worker)));
  if (signal)
    throw new Interrupted(
      signal,
      `stopped by ${signal} after ${done} of ${jobs.length} runs; the same command continues (finished runs are reused, interrupted ones resumed)`,
    );
  return results;
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');

export async function reproduceCommand(argv: string[], io: CliIo): Promise<void> {
  const v = parse(argv, {
    config: { type: 'string' },
    out: { type: 'string' },
    seeds: { type: 'string' },
    steps: { type: 'string' },
    'eval-every': { type: 'string' },
    methods: { type: 'string' },
    jobs: { type: 'string' },
    policy: { type: 'string' },
    backend: { type: 'string' },
    wishes: { type: 'string' },
    lr: { type: 'string' },
    ...SET_OPTION,
    json: { type: 'boolean' },
  });
  const file = required(v, 'config');
  const dir = notStdout(required(v, 'out'), 'out', 'a folder');
  let base: RunConfig;
  try {
    const raw: unknown = JSON.parse(readLocalText(file, FILE_LIMITS.runConfig));
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) applySets(raw as Record<string, unknown>, setValues(v));
    base = parseRunConfig(raw);
  } catch (e) {
    throw e instanceof InputFileError ? e : new UsageError(`${file}: ${(e as Error).message}`);
  }
  const seeds = list(String(v.seeds ?? DEFAULT_SEEDS.join(',')), 'seeds', (s) => (/^-?\d+$/.test(s) ? Number(s) : null));
  const arms = list(String(v.methods ?? ['base', ...DEFAULT_TRAINED_ARMS].join(',')), 'methods', (m) => (isArm(m) ? m : null));
  const trained = arms.filter((a): a is TrainedArm => a !== 'base');
  if (!trained.length) throw new UsageError('--methods: name at least one trained arm (the base row comes from their step-0 evaluation)');
  const needsChild = trained.filter((a) => OTHER_CHILD_ARMS.includes(a));
  if (needsChild.length && base.scenario.id !== 'storyteller')
    throw new UsageError(
      `--methods: ${needsChild.join(', ')} rewrite${needsChild.length > 1 ? '' : 's'} hints for another storyteller child; use a storyteller config or leave ${needsChild.length > 1 ? 'them' : 'it'} out`,
    );
  const steps = number(v, 'steps', 16, isPositiveInt);
  const evalEvery = number(v, 'eval-every', Math.max(1, Math.floor(steps / 2)), isPositiveInt);
  const jobs = number(v, 'jobs', 1, isPositiveInt);
  const wishes = typeof v.wishes === 'string' ? list(v.wishes, 'wishes', parseWishes) : null;
  const lrs = typeof v.lr === 'string' ? list(v.lr, 'lr', (s) => (Number(s) > 0 ? Number(s) : null)) : null;
  if (wishes && lrs) throw new UsageError('--wishes and --lr are separate experiments; run them one at a time');
  if (wishes && base.scenario.id !== 'storyteller') throw new UsageError('--wishes needs a storyteller config');
  if (typeof v.policy === 'string') base.models.policy.model = v.policy;
  if (typeof v.backend === 'string') base.models.policy.backend = backendOption(v.backend);
  mkdirSync(dir, { recursive: true });

  const schedule = { ...base.schedule, steps, evalEvery };
  const variants: { config: RunConfig; tag: string; extra: Partial<RunScores> }[] = wishes
    ? wishes.map((w) => ({
        config: { ...base, scenario: { ...base.scenario, ...w } } as RunConfig,
        tag: slug(`${w.subject}-${w.name}-${w.favourite}`),
        extra: { wishes: `${w.subject} / ${w.name} / ${w.favourite}` },
      }))
    : lrs
      ? lrs.map((lr) => ({ config: { ...base, problems: { ...base.problems, split: 'tuning' as const } }, tag: `lr${lr}`, extra: { lr } }))
      : [{ config: base, tag: '', extra: {} }];
  const jobList: Job[] = [];
  for (const variant of variants)
    for (const seed of seeds)
      for (const arm of trained) {
        let config = configForArm({ ...variant.config, seed, schedule }, arm);
        if (variant.extra.lr !== undefined)
          config = { ...config, preset: { ...config.preset, optimizer: { ...config.preset.optimizer, lr: variant.extra.lr } } };
        const name = [arm, variant.tag, `seed${seed}`].filter(Boolean).join('-');
        jobList.push({ config, file: join(dir, `${name}.nsrun`), scores: { arm, seed, ...variant.extra } });
      }
  const runs = await runJobs(jobList, jobs, v.json === true, io);

  const reportSteps = [...new Set([0, ...runs.flatMap((r) => r.scores.map((s) => s.step))])].sort((a, b) => a - b);
  const command = madeByCommand(file, {
    seeds,
    steps,
    evalEvery,
    arms,
    wishes,
    lrs,
    policy: v.policy as string | undefined,
    backend: v.backend as string | undefined,
    sets: setValues(v),
  });
  const made = `Made by \`${command}\`.`;
  const head = { command, policy: portableModelName(base.models.policy.model), scenario: base.scenario };
  if (wishes) {
    const arm = trained.includes('combined') ? 'combined' : trained[0];
    const rows = wishTable(runs, arm, steps);
    writeFileSync(join(dir, 'wishes.json'), `${JSON.stringify({ ...head, arm, step: steps, rows, runs }, null, 2)}\n`);
    const md = wishMarkdown(rows, arm, steps, seeds);
    writeFileSync(join(dir, 'wishes.md'), `${md}\n\n${made}\n`);
    io.out(v.json ? JSON.stringify({ type: 'wishes', rows }) : md);
    return;
  }
  if (lrs) {
    const rows = sweepTable(runs, steps);
    writeFileSync(join(dir, 'lr-sweep.json'), `${JSON.stringify({ ...head, step: steps, rows, runs }, null, 2)}\n`);
    const md = sweepMarkdown(rows, steps, seeds);
    writeFileSync(join(dir, 'lr-sweep.md'), `${md}\n\n${made}\n`);
    io.out(v.json ? JSON.stringify({ type: 'sweep', rows }) : md);
    return;
  }
  const table = reproductionTable(
    runs.filter((r) => arms.includes(r.arm)),
    reportSteps,
  );
  if (!arms.includes('base')) table.rows = table.rows.filter((r) => r.arm !== 'base');
  const rates = wishRatesTable(
    runs.filter((r) => arms.includes(r.arm)),
    steps,
  );
  const md = [reproductionMarkdown(table), ...(rates ? [wishRatesMarkdown(rates, seeds)] : [])].join('\n\n');
  writeFileSync(join(dir, 'reproduction.json'), `${JSON.stringify({ ...head, table, ...(rates ? { rates } : {}), runs }, null, 2)}\n`);
  writeFileSync(join(dir, 'reproduction.md'), `${md}\n\n${made}\n`);
  writeFileSync(join(dir, 'reproduction.svg'), `${reproductionSvg(table)}\n`);
  io.out(v.json ? JSON.stringify({ type: 'table', ...table, ...(rates ? { rates } : {}) }) : md);
}
