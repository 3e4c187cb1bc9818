/**
 * The conventions a shell user expects of `nextstate`: help and version, exit codes, data on
 * stdout and everything else on stderr, `-` for stdout, progress only on a terminal, and
 * Ctrl-C / SIGTERM stopping a run with its run file written. Spawns the real bin where the
 * process boundary is the point (exit codes, streams, signals).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { dataPath } from '../../test/data-dir';
import { nextstate } from '../../test/support/cli/nextstate';
import { runCli, runCliWith } from '../../test/support/cli/run-cli';
import { until } from '../../test/support/cli/serve';
import { sampleRun, testConfig } from '../../test/support/storage/fixtures';
import { exampleConfig } from '../runtime/run-config';
import { memorySource, runFileStream } from '../storage/runfile';
import { cliIo, timeLeft } from './io';
import { COMMANDS } from './main';
import { Interrupted, stoppable } from './signals';

const stories = dataPath('models/stories260K')!;
const dir = mkdtempSync(join(tmpdir(), 'nextstate-conventions-'));

async function runFile(): Promise<string> {
  const config = testConfig({ ...exampleConfig('storyteller') });
  const source = memorySource({ config, label: 'conventions', notes: '', created: 1_000, status: 'finished' }, sampleRun());
  const path = join(dir, `run-${Math.random().toString(36).slice(2)}.nsrun`);
  writeFileSync(path, new Uint8Array(await new Response(runFileStream(source)).arrayBuffer()));
  return path;
}

describe('help, version and exit codes', () => {
  it('-h and --help on every command print its usage on stdout and exit 0, before any other check', async () => {
    for (const [name, { usage }] of Object.entries(COMMANDS)) {
      for (const flag of ['-h', '--help']) {
        // --no-such-option would be a usage error: help wins, as in other tools.
        const r = await runCli(name, '--no-such-option', flag);
        expect(r, `${name} ${flag}`).toEqual({ code: 0, out: [usage], err: [] });
      }
    }
    expect(await runCli('help', 'export')).toEqual({ code: 0, out: [COMMANDS.export.usage], err: [] });
  });

  it('through the real bin: a bare nextstate gets a short usage on stderr and exit 2; --help the whole help on stdout; --version the version', async () => {
    const bare = await nextstate([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^usage: nextstate COMMAND/);
    expect(bare.stderr.split('\n').length).toBeLessThan(6);

    const helped = await nextstate(['--help']);
    expect(helped.code).toBe(0);
    expect(helped.stderr).toBe('');
    for (const name of Object.keys(COMMANDS)) expect(helped.stdout).toContain(`nextstate ${name} `);

    const v = await nextstate(['--version']);
    expect(v).toEqual({ code: 0, signal: null, stdout: `${version}\n`, stderr: '' });

    const run = await nextstate(['run', '--help']);
    expect(run).toEqual({ code: 0, signal: null, stdout: `${COMMANDS.run.usage}\n`, stderr: '' });
  });

  it('a usage error goes to stderr and exits 2; a runtime error exits 1 with one line', async () => {
    const unknown = await runCli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toEqual([]);
    expect(unknown.err[0]).toMatch(/^nextstate: unknown command "frobnicate"\nusage: nextstate COMMAND/);

    const usage = await runCli('inspect');
    expect(usage.code).toBe(2);
    expect(usage.out).toEqual([]);
    expect(usage.err).toEqual(['nextstate inspect: name the run file to inspect', `usage: ${COMMANDS.inspect.usage}`]);

    const runtime = await runCli('inspect', join(dir, 'missing.nsrun'));
    expect(runtime.code).toBe(1);
    expect(runtime.out).toEqual([]);
    expect(runtime.err).toHaveLength(1);
    expect(runtime.err[0]).toMatch(/^nextstate inspect: cannot open .*missing\.nsrun \(ENOENT\)/);
  });

  it('a -h after -- is a positional, not a request for help', async () => {
    const r = await runCli('inspect', '--', '-h');
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/cannot open -h/);
  });
});

describe('stdout carries the data, stderr the rest', () => {
  it('export --records - prints the same lines the file gets, and says what it did on stderr only', async () => {
    const file = await runFile();
    const records = join(dir, 'records.jsonl');
    const toFile = await nextstate(['export', file, '--records', records]);
    expect(toFile.code).toBe(0);
    expect(toFile.stdout).toBe('');
    expect(toFile.stderr).toMatch(/^\d+ records written to .*records\.jsonl\n$/);

    const toStdout = await nextstate(['export', file, '--records', '-']);
    expect(toStdout.code).toBe(0);
    expect(toStdout.stdout).toBe(readFileSync(records, 'utf8'));
    expect(toStdout.stderr).toMatch(/^\d+ records written to stdout\n$/);

    // --quiet leaves only the data.
    expect(await nextstate(['export', file, '--records', '-', '--quiet'])).toEqual({ code: 0, signal: null, stdout: toStdout.stdout, stderr: '' });
  });

  it('refuses - where the output is a folder or a run file, instead of creating one named -', async () => {
    const file = await runFile();
    for (const argv of [
      ['export', file, '--peft', '-'],
      ['export', file, '--samples', '-', '--records', '-'],
      ['train', '--model', stories, '--data', 'x.jsonl', '--out', '-'],
      ['run', '--config', file, '--out', '-'],
    ]) {
      const r = await runCli(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err[0]).toMatch(/stdout/);
    }
  });

  it('train: step lines are progress, on a terminal only; stdout has the one result line', async () => {
    const data = join(dir, 'data.jsonl');
    writeFileSync(data, JSON.stringify({ prompt: 'Once upon a time', completion: ' there was a dog.', advantage: 1 }));
    // --force: each call writes the same folder again.
    const train = (stderrIsTTY: boolean, ...more: string[]) =>
      runCliWith(
        { stderrIsTTY },
        'train',
        '--model',
        stories,
        '--data',
        data,
        '--out',
        join(dir, 'adapter'),
        '--steps',
        '2',
        '--lora-rank',
        '2',
        '--force',
        ...more,
      );
    const watched = await train(true);
    expect(watched.code).toBe(0);
    expect(watched.out).toHaveLength(1);
    expect(JSON.parse(watched.out[0])).toHaveProperty('after');
    expect(watched.err.map((l) => l.split(':')[0])).toEqual(['step 1/2', 'step 2/2', `adapter written to ${join(dir, 'adapter')}`]);
    expect(watched.err[0]).toMatch(/\(about \d+ s left\)$/);

    const logged = await train(false);
    expect(logged.err).toEqual([`adapter written to ${join(dir, 'adapter')}`]);
    expect((await train(true, '-q')).err).toEqual([]);
  });
});

describe('where the lines go, and how long is left', () => {
  it('cliIo: progress only to a terminal, nothing but data with quiet', () => {
    const got: string[] = [];
    const record = (o: { quiet?: boolean; stderrIsTTY?: boolean }) => {
      const io = cliIo(
        (l) => got.push(`out ${l}`),
        (l) => got.push(`err ${l}`),
        o,
      );
      io.out('data');
      io.note('note');
      io.progress('progress');
    };
    record({ stderrIsTTY: true });
    record({ stderrIsTTY: false });
    record({ quiet: true, stderrIsTTY: true });
    expect(got).toEqual(['out data', 'err note', 'err progress', 'out data', 'err note', 'out data']);
  });

  it('timeLeft extrapolates the pace so far, and says nothing before the first unit or after the last', () => {
    expect(timeLeft(0, 1, 4, 10_000)).toBe(' (about 30 s left)');
    expect(timeLeft(0, 2, 10, 2 * 65_000)).toBe(' (about 8 min 40 s left)');
    expect(timeLeft(0, 1, 3, 1_900_000)).toBe(' (about 1 h 03 min left)');
    expect(timeLeft(0, 0, 4, 10_000)).toBe('');
    expect(timeLeft(0, 4, 4, 10_000)).toBe('');
  });
});

describe('signals', () => {
  it('stoppable: the first SIGINT or SIGTERM calls stop and is reported; its handlers are gone afterwards', async () => {
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    let release = () => {};
    const stops: string[] = [];
    const pending = stoppable(
      (s) => {
        stops.push(s);
        release();
      },
      () => new Promise<string>((r) => (release = () => r('stopped'))),
    );
    process.emit('SIGTERM');
    expect(await pending).toEqual({ value: 'stopped', signal: 'SIGTERM' });
    expect(stops).toEqual(['SIGTERM']);
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
    expect(new Interrupted('SIGINT', 'x').exitCode).toBe(130);
    expect(new Interrupted('SIGTERM', 'x').exitCode).toBe(143);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('run stops at the next step on %s, writes a readable run file, and exits %i', async (signal, exitCode) => {
    const config = JSON.parse((await runCli('run', '--example', 'storyteller')).out.join('\n'));
    config.schedule = { ...config.schedule, steps: 1000, evalEvery: 1000, evalProblems: 1, evalVotes: 1 };
    config.preset.batch.size = 2;
    const runJson = join(dir, `${signal}.json`);
    writeFileSync(runJson, JSON.stringify(config));
    const file = join(dir, `${signal}.nsrun`);
    let sent = false;
    const r = await nextstate(['run', '--config', runJson, '--policy', stories, '--out', file, '--json'], (line, kill) => {
      if (!sent && JSON.parse(line).type === 'train_step') {
        sent = true;
        kill(signal);
      }
    });
    expect(r.code).toBe(exitCode);
    // stdout stays JSON lines only; the one line about the stop is on stderr.
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'train_step').length).toBeLessThan(1000);
    expect(r.stderr).toMatch(new RegExp(`^nextstate run: stopped by ${signal}: \\d+ records written to .*${signal}\\.nsrun\\n$`));
    const inspected = await runCli('inspect', file, '--json');
    expect(inspected.code).toBe(0);
    const info = JSON.parse(inspected.out[0]);
    expect(info.header.run.status).toBe('stopped');
    expect(info.integrity).toBe('verified');
  });

  it('reproduce --jobs 2 passes SIGINT to its runs, starts no more, and exits 130 saying how to go on', async () => {
    const config = JSON.parse((await runCli('run', '--example', 'storyteller')).out.join('\n'));
    const runJson = join(dir, 'reproduce.json');
    writeFileSync(runJson, JSON.stringify({ ...config, schedule: { ...config.schedule, evalProblems: 1, evalVotes: 1 } }));
    const out = join(dir, 'reproduce');
    let kill: (s: NodeJS.Signals) => void = () => {};
    const exited = nextstate(
      ['reproduce', '--config', runJson, '--out', out, '--seeds', '1', '--methods', 'binary,opd', '--steps', '1000', '--jobs', '2', '--policy', stories],
      undefined,
      (k) => (kill = k),
    );
    // Each run's config is written just before its child starts: the experiment is under way.
    await until(() => existsSync(join(out, 'opd-seed1.nsrun.config.json')));
    kill('SIGINT');
    const r = await exited;
    expect(r.code).toBe(130);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n').at(-1)).toBe(
      'nextstate reproduce: stopped by SIGINT after 0 of 2 runs; the same command continues (finished runs are reused, interrupted ones resumed)',
    );
  });
});
