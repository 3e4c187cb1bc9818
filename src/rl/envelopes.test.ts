import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_ENVELOPES, stripEnvelope } from './envelopes';

const fixture = JSON.parse(readFileSync(new URL('../../test/fixtures/openclaw-envelopes.json', import.meta.url), 'utf8')) as {
  cases: { source: string; raw: string; person: string }[];
  unwrapped: string[];
};

describe('stripEnvelope', () => {
  it.each(fixture.cases)('leaves the person’s words of $source', ({ raw, person }) => {
    expect(stripEnvelope(raw)).toBe(person);
  });

  it.each(fixture.unwrapped)('leaves a message without an envelope as it is: %j', (text) => {
    expect(stripEnvelope(text)).toBe(text);
  });

  it('strips only the envelopes it is given', () => {
    const raw = fixture.cases[0].raw;
    expect(stripEnvelope(raw, [])).toBe(raw);
    expect(
      stripEnvelope(
        raw,
        CLIENT_ENVELOPES.filter((e) => e.part !== 'timestamp'),
      ),
    ).toBe(raw);
  });

  it('keeps every pattern global and multiline, so each part of a queued message loses its own', () => {
    for (const e of CLIENT_ENVELOPES) expect(e.pattern.flags, e.part).toBe('gm');
  });
});
