/**
 * `nextstate run` loses no finished step: real children killed (kill -9 between steps, SIGTERM
 * right after a checkpoint), their files read back with inspect, and --resume finishing the run.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { nextstate } from '../../test/support/cli/nextstate';
import { runCli } from '../../test/support/cli/run-cli';
import { until } from '../../test/support/cli/serve';
import type { RunRecord } from '../rl/records';
import { exampleConfig, parseRunConfig } from '../runtime/run-config';
import { resumeRunFile, RunFailedError, runToFile } from './run';
import { checkpointsPath, checkpointVersions, journalPath, readJournal } from '../runtime/run-journal';

const dir = mkdtempSync(join(tmpdir(), 'nextstate-durable-'));
let configFile = '';
/** The kill -9 run's config: steps enough that the kill, polled for after step 2, lands long before the run could end. */
let longConfigFile = '';
const LONG_STEPS = 24;

beforeAll(async () => {
  const { dir: model } = await tinyModel({ family: 'qwen3' });
  // The storyteller's rules roles on the tiny fixture: a step is a few turns of 4 tokens.
  const config = exampleConfig('storyteller', model, 'binary');
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 4, evalEvery: 1000, evalProblems: 1, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
  configFile = join(dir, 'run.json');
  writeFileSync(configFile, JSON.stringify(config));
  longConfigFile = join(dir, 'long-run.json');
  writeFileSync(longConfigFile, JSON.stringify({ ...config, schedule: { ...config.schedule, steps: LONG_STEPS } }));
});

const steps = (records: readonly RunRecord[]) => records.flatMap((r) => (r.kind === 'train_step' ? [r.step] : []));

/** What inspect reads from a run file: its status, integrity and the steps its records hold. */
async function inspected(file: string): Promise<{ status: string; integrity: string; records: number }> {
  const r = await runCli('inspect', file, '--json');
  expect(r.code, r.err.join('\n')).toBe(0);
  const info = JSON.parse(r.out[0]);
  return { status: info.header.run.status, integrity: info.integrity, records: info.summary.records };
}

/** `run --resume` to the end: every step once from the resume point on, the file finished and whole. */
async function resumeToEnd(file: string, total: number, extra: string[] = []): Promise<void> {
  const before = readJournal(journalPath(file)).records;
  const r = await nextstate(['run', '--resume', file, '--json', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const after = readJournal(journalPath(file)).records;
  // Nothing logged before is lost or rewritten: the log only grows.
  expect(after.slice(0, before.length)).toEqual(before);
  const done = steps(after);
  expect(new Set(done)).toEqual(new Set(Array.from({ length: total }, (_, i) => i + 1)));
  expect(after.some((x) => x.kind === 'evaluation' && x.step === total)).toBe(true);
  const info = await inspected(file);
  expect(info).toEqual({ status: 'finished', integrity: 'verified', records: after.length });
}

describe('nextstate run keeps every finished step on disk', () => {
  it('kill -9 between steps, while samples wait in the buffer: every reported step is in the run file, and --resume finishes the run', async () => {
    const file = join(dir, 'killed.nsrun');
    const reported: number[] = [];
    let killed = false;
    // A tiny step takes milliseconds on the fast backend: with only a few steps to go, the run
    // could finish between two polls of the journal and leave nothing to resume.
    const r = await nextstate(['run', '--config', longConfigFile, '--out', file, '--json'], (line, kill) => {
      const e = JSON.parse(line);
      if (e.type === 'train_step') reported.push(e.step);
      if (e.step === 2 && !killed) {
        killed = true;
        // Once the next step's samples are journaled (buffered, not trained on), kill it hard.
        void until(
          () => {
            const rs = readJournal(journalPath(file)).records;
            return rs.slice(rs.findLastIndex((x) => x.kind === 'train_step')).some((x) => x.kind === 'sample');
          },
          60_000,
          'a buffered sample after step 2',
        ).then(() => kill('SIGKILL'));
      }
    });
    expect(r.signal).toBe('SIGKILL');
    expect(reported.slice(0, 2)).toEqual([1, 2]);
    // The run file was rewritten after each step: inspect reads it, with every reported step.
    const info = await inspected(file);
    expect(info.status).toBe('running');
    expect(info.integrity).toBe('verified');
    const journaled = readJournal(journalPath(file)).records;
    expect(steps(journaled).slice(0, reported.length)).toEqual(reported);
    expect(checkpointVersions(file)).toEqual(expect.arrayContaining([1, 2]));
    expect(steps(journaled).length).toBeLessThan(LONG_STEPS);
    await resumeToEnd(file, LONG_STEPS);

    // Stopped after the last step but before its evaluation: --resume only evaluates.
    const journal = readJournal(journalPath(file));
    const cut = journal.records.findLastIndex((x) => x.kind === 'version_boundary') + 1;
    const lines = [journal.header, ...journal.records.slice(0, cut)].map((x) => JSON.stringify(x) + '\n');
    writeFileSync(journalPath(file), lines.join(''));
    const evaluated = await resumeRunFile(file);
    expect(evaluated.status).toBe('finished');
    expect(steps(evaluated.records.slice(cut))).toEqual([]);
    expect(
      evaluated.records
        .slice(cut)
        .filter((x) => x.kind === 'evaluation')
        .map((x) => x.step),
    ).toEqual([LONG_STEPS]);
  });

  it('SIGTERM right after a checkpoint stops with 143 and a finished-step file; --resume --steps extends the run', async () => {
    const file = join(dir, 'stopped.nsrun');
    let sent = false;
    const r = await nextstate(['run', '--config', configFile, '--out', file, '--json'], (line, kill) => {
      if (!sent && JSON.parse(line).type === 'train_step') {
        sent = true;
        kill('SIGTERM');
      }
    });
    expect(r.code).toBe(143);
    expect(r.stderr).toMatch(/stopped by SIGTERM: \d+ records written to .*stopped\.nsrun\n$/);
    const info = await inspected(file);
    expect(info).toMatchObject({ status: 'stopped', integrity: 'verified' });
    expect(steps(readJournal(journalPath(file)).records)[0]).toBe(1);
    expect(existsSync(join(checkpointsPath(file), 'v1'))).toBe(true);
    await resumeToEnd(file, 5, ['--steps', '5']);
  });

  it('refuses --config with --resume, a run already done, a file without a journal, and an --out that has a run', async () => {
    const both = await runCli('run', '--resume', join(dir, 'x.nsrun'), '--config', configFile);
    expect(both.code).toBe(2);
    expect(both.err[0]).toMatch(/--resume continues the run with the config it recorded; leave out --config/);
    const missing = await runCli('run', '--resume', join(dir, 'missing.nsrun'));
    expect(missing.code).toBe(1);
    expect(missing.err[0]).toMatch(/missing\.nsrun\.journal not found; --resume continues a run/);
    // The SIGTERM test's run ended at step 5 of 5.
    const done = await runCli('run', '--resume', join(dir, 'stopped.nsrun'));
    expect(done.err[0]).toMatch(/has done 5 of its 5 steps already; give --steps N above 5 to go on/);
    const taken = await runCli('run', '--config', configFile, '--out', join(dir, 'stopped.nsrun'));
    expect(taken.code).toBe(1);
    expect(taken.err[0]).toMatch(/stopped\.nsrun already exists; pass --resume to continue that run, --force to replace it, or choose another --out/);
  });

  it('an endpoint that starts failing ends the run with one line naming the file, which holds every finished step; --resume goes on once it answers', async () => {
    // The simulated user on an OpenAI-compatible endpoint that answers 24 requests, then 400s. It
    // never says the story is right, so each session runs its 8 turns; the first two sessions end
    // within those 24 answers, and a fixed schedule buffers a session's samples when it ends.
    let answered = 0;
    let failing = true;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (failing && answered >= 24) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"quota exceeded"}}');
          return;
        }
        answered++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Go on, tell me more.' } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const config = parseRunConfig(JSON.parse(readFileSync(configFile, 'utf8')));
      config.models.user = { kind: 'endpoint', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, model: 'user-sim' };
      config.schedule.steps = 50;
      const file = join(dir, 'endpoint.nsrun');
      const failed = await runToFile(config, { file }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(RunFailedError);
      expect((failed as Error).message).toMatch(/400.*; its \d+ records are in .*endpoint\.nsrun \(nextstate run --resume .*endpoint\.nsrun continues it\)$/);
      const journaled = readJournal(journalPath(file)).records;
      expect(steps(journaled).length).toBeGreaterThan(0);
      expect(await inspected(file)).toEqual({ status: 'stopped', integrity: 'verified', records: journaled.length });
      failing = false;
      const done = steps(journaled).at(-1)!;
      const resumed = await resumeRunFile(file, { steps: done + 1 });
      expect(resumed.status).toBe('finished');
      expect(steps(resumed.records).at(-1)).toBe(done + 1);
    } finally {
      server.close();
    }
  });
});
