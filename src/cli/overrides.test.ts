import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../test/support/cli/run-cli';
import { byteSize, durationMs, UsageError } from './args';
import { applySets } from './overrides';

describe('--set PATH=VALUE', () => {
  it('writes JSON values, or text where the value is not JSON, making the objects on the path', () => {
    const config: Record<string, unknown> = { preset: { judge: { binaryVotes: 1 } } };
    applySets(config, ['preset.judge.binaryVotes=3', 'preset.advantage.teacher=current', 'preset.optimizer.betas=[0.9,0.99]', 'label="7"']);
    expect(config).toEqual({
      preset: { judge: { binaryVotes: 3 }, advantage: { teacher: 'current' }, optimizer: { betas: [0.9, 0.99] } },
      label: '7',
    });
  });

  it.each([['preset.judge'], ['preset..judge=1'], ['=1'], ['preset.__proto__.x=1'], ['preset.judge.binaryVotes.x=1']])(
    'refuses %j with a usage error',
    (entry) => {
      expect(() => applySets({ preset: { judge: { binaryVotes: 1 } } }, [entry])).toThrow(UsageError);
    },
  );

  it('reads durations for --idle-timeout, off as 0', () => {
    const of = (x: string) => durationMs({ 'idle-timeout': x }, 'idle-timeout');
    expect([of('90s'), of('30m'), of('2h'), of('1500ms'), of('off')]).toEqual([90_000, 1_800_000, 7_200_000, 1500, 0]);
    expect(durationMs({}, 'idle-timeout')).toBeUndefined();
    for (const bad of ['30', '0s', 'soon', '-5m']) expect(() => of(bad)).toThrow(/--idle-timeout must be a duration/);
  });

  it('reads sizes for --max-memory: bytes, or K, M and G as powers of 1024', () => {
    const of = (x: string) => byteSize({ 'max-memory': x }, 'max-memory');
    expect([of('65536'), of('4k'), of('512M'), of('8G'), of('1.5G')]).toEqual([65536, 4096, 512 * 2 ** 20, 8 * 2 ** 30, 1.5 * 2 ** 30]);
    expect(byteSize({}, 'max-memory')).toBeUndefined();
    for (const bad of ['0', '0G', '8T', '8GB', '-1G', 'lots', '']) expect(() => of(bad)).toThrow(/--max-memory must be a size in bytes/);
  });

  it('run takes it for a config and an example, and the config checker refuses a bad field by name', async () => {
    const example = await runCli('run', '--example', 'student', '--set', 'preset.judge.binaryVotes=3', '--set', 'schedule.steps=2');
    expect(example.code).toBe(0);
    const config = JSON.parse(example.out.join('\n'));
    expect([config.preset.judge.binaryVotes, config.schedule.steps]).toEqual([3, 2]);
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-set-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(config));
    const tooMany = await runCli('run', '--config', join(dir, 'run.json'), '--set', 'preset.judge.binaryVotes=1000');
    expect(tooMany.code).not.toBe(0);
    expect(tooMany.err.join('\n')).toMatch(/judge\.binaryVotes/);
    const unknown = await runCli('run', '--config', join(dir, 'run.json'), '--set', 'preset.judge.votes=3');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err.join('\n')).toMatch(/judge\.votes/);
    const resumed = await runCli('run', '--resume', join(dir, 'none.nsrun'), '--set', 'schedule.steps=2');
    expect(resumed.err.join('\n')).toMatch(/leave out --set/);
  });
});
