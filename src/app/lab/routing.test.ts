import { describe, expect, it } from 'vitest';
import { hashFor, PAGES, parseHash } from './routing';

describe('routing', () => {
  it('reads every page and the open run from the hash', () => {
    for (const page of PAGES) expect(parseHash(`#/${page}`)).toEqual({ page });
    expect(parseHash('#/run/a%2Fb c')).toEqual({ page: 'run', runId: 'a/b c' });
  });

  it('ignores hashes that name no page', () => {
    expect(parseHash('')).toBeNull();
    expect(parseHash('#/open?url=https://x')).toBeNull();
    expect(parseHash('#/settings')).toBeNull();
  });

  it('writes the hash it reads back', () => {
    expect(hashFor('runs', 'r1')).toBe('#/runs');
    expect(hashFor('run', null)).toBe('#/run');
    expect(parseHash(hashFor('run', 'a/b c'))).toEqual({ page: 'run', runId: 'a/b c' });
  });
});
