import { describe, expect, it } from 'vitest';
import { LEGEND_MAX, runTags, seriesLabel, shortRunId } from './run-names';

const run = (id: string, label: string) => ({ id, label });

describe('run tags for overlaid charts', () => {
  it('names each run by the parts of its label the others do not share', () => {
    expect(runTags([run('a1', 'walk · OPD · seed 1'), run('b2', 'walk · Binary RL · seed 1')])).toEqual(['OPD', 'Binary RL']);
    expect(runTags([run('a1', 'storyteller · OPD · seed 1'), run('b2', 'storyteller · Combined · seed 2')])).toEqual(['OPD · seed 1', 'Combined · seed 2']);
  });

  it('gives a single run no tag: the heading names it', () => {
    expect(runTags([run('a1', 'walk · OPD · seed 1')])).toEqual([null]);
  });

  it('tells runs of one name apart by their short ids', () => {
    const same = runTags([run('3f9a1c22-0000', 'storyteller · Combined'), run('77b0e4aa-1111', 'storyteller · Combined')]);
    expect(same).toEqual(['#3f9a1c', '#77b0e4']);
    expect(runTags([run('3f9a1c22', 'a · x'), run('77b0e4aa', 'a · x'), run('c0ffee00', 'a · y')])).toEqual(['x #3f9a1c', 'x #77b0e4', 'y']);
  });

  it('keeps every legend entry under the phone limit, long labels and long series names included', () => {
    const long = 'Combined, another child’s hints, with a much longer name than any arm';
    const tags = runTags([run('11111111', `story · ${long} · seed 1`), run('22222222', `story · ${long} · seed 2`), run('33333333', 'other')]);
    expect(new Set(tags).size).toBe(3);
    for (const t of tags) expect(seriesLabel(t, 'tool success').length).toBeLessThanOrEqual(LEGEND_MAX);
  });

  it('names the series alone for a single run', () => {
    expect(seriesLabel(null, 'Loss')).toBe('Loss');
    expect(seriesLabel('OPD', 'train')).toBe('OPD · train');
    expect(seriesLabel('OPD')).toBe('OPD');
  });

  it('shortens an id to its first six characters', () => {
    expect(shortRunId('3f9a1c22-4b7e-4f21-9a3d-1c2b3d4e5f60')).toBe('3f9a1c');
  });
});
