import { describe, expect, it } from 'vitest';
import { byteTokenBytes, byteTokenText, readable, readReply, readTokens, TokenReader } from './readable-text';

const b = (...bytes: number[]) => byteTokenText(bytes);

describe('readable text', () => {
  it('shows control characters and bare U+FFFD as escapes, and keeps tabs and line breaks', () => {
    expect(readable('bed.\u0007 the\u0000 end\u007f\u0085')).toBe('bed.⟨0x07⟩ the⟨0x00⟩ end⟨0x7F⟩⟨0x85⟩');
    expect(readable('a\tb\nc\r\n')).toBe('a\tb\nc\r\n');
    expect(readable('the ground \ufffd it')).toBe('the ground ⟨?⟩ it');
  });

  it('reads byte notation back, and only whole byte notation', () => {
    expect(byteTokenBytes('<0xE2><0x80>')).toEqual([0xe2, 0x80]);
    expect(byteTokenBytes(b(7))).toEqual([7]);
    expect(byteTokenBytes('<0xe2>')).toBeNull();
    expect(byteTokenBytes('a<0xE2>')).toBeNull();
    expect(byteTokenBytes('')).toBeNull();
  });

  it('decodes a character split over byte tokens at the token of its first byte', () => {
    const texts = ['He', 'said', b(0xe2), b(0x80), b(0x99), 'hi'];
    const response = 'He said’hi';
    const read = readTokens(response, texts);
    expect(read.tokens.map((t) => t.text)).toEqual(['He', ' said', '’', '', '', 'hi']);
    expect(read.tokens.map((t) => t.run)).toEqual([null, null, '’', '’', '’', null]);
    expect(read.aligned).toBe(6);
    expect(readReply(response, texts)).toBe('He said’hi');
  });

  it('shows bytes that make no character, and control bytes, as escapes where the tokenizer wrote "�" or the byte', () => {
    // What the tokenizer decodes for these tokens: a lone lead byte is one U+FFFD, 0x07 is BEL.
    const texts = ['the', 'ground', b(0xe2), 'it', 'bed', '.', b(0x07), 'the'];
    const response = 'the ground\ufffd it bed.\u0007 the';
    expect(readReply(response, texts)).toBe('the ground⟨0xE2⟩ it bed.⟨0x07⟩ the');
  });

  it('counts each ill-formed part as the decoder does, so the reply stays aligned after it', () => {
    // E0 80: E0 wants A0..BF next, so E0 and 80 are two errors; F0 9F 98 then 'x': one error.
    const texts = [b(0xe0), b(0x80), b(0xf0, 0x9f), b(0x98), 'x', 'y'];
    const response = '\ufffd\ufffd\ufffdx y';
    expect(readReply(response, texts)).toBe('⟨0xE0⟩⟨0x80⟩⟨0xF0⟩⟨0x9F⟩⟨0x98⟩x y');
  });

  it('keeps the rest of the reply, made readable, from the first token it cannot find', () => {
    expect(readReply('Once upon a time\u0007', ['Once', 'up', 'on', 'X', 'time'])).toBe('Once upon a time⟨0x07⟩');
    expect(readTokens('ab', ['a', 'b', '</s>']).tokens.map((t) => t.text)).toEqual(['a', 'b', '</s>']);
    expect(readReply('plain \ufffd', undefined)).toBe('plain ⟨?⟩');
  });

  it.each([
    ['The dog liked', ['The', 'do', 'g', 'li', 'ked'], ['The', ' do', 'g', ' li', 'ked']],
    ['a\nb', ['a', 'b'], ['a', '\nb']],
    ['a\nb', ['a', b(0x0a), 'b'], ['a', '\n', 'b']],
    ['a b', ['a', b(0x0a), 'b'], ['a', '\n', 'b']], // unmatched: the rest keep their own texts
    ['heard Raches', ['he', 'ar', 'd', '', 'R', 'aches'], ['he', 'ar', 'd', ' ', 'R', 'aches']], // a lone '▁' piece
    ['', [], []],
  ])('gives each token of %j the whitespace before it', (response, texts, want) => {
    expect(readTokens(response, texts).tokens.map((t) => t.text)).toEqual(want);
  });

  it('reads a reply that went out shown as the one the tokenizer decoded', () => {
    // nextstate serve sends the reply shown: a client that records it keeps the escapes, not "�".
    const texts = ['the', 'ground', b(0xe2), 'it', 'bed', '.', b(0x07), 'the', b(0xe2, 0x9c)];
    const shown = 'the ground⟨0xE2⟩ it bed.⟨0x07⟩ the⟨0xE2⟩⟨0x9C⟩';
    expect(readReply('the ground\ufffd it bed.\u0007 the\ufffd', texts)).toBe(shown);
    const read = readTokens(shown, texts);
    expect(read.aligned).toBe(texts.length);
    expect(read.tokens.map((t) => t.text)).toEqual(['the', ' ground', '⟨0xE2⟩', ' it', ' bed', '.', '⟨0x07⟩', ' the', '⟨0xE2⟩⟨0x9C⟩']);
    expect(readReply(shown, texts)).toBe(shown);
  });

  it('reads tokens a record kept as "�" by the characters they make together, and claims no bytes for them', () => {
    // Before records kept bytes, a byte token decoded alone was kept as "�"; the reply kept the character.
    const read = readTokens('He said ✓hi’ ok', ['He', 'said', '\ufffd', '\ufffd', '\ufffd', 'hi', '’', 'ok']);
    expect(read.tokens.map((t) => t.text)).toEqual(['He', ' said', ' ✓', '', '', 'hi', '’', ' ok']);
    expect(read.aligned).toBe(8);
    expect(read.tokens.slice(2, 5)).toEqual([1, 2, 3].map((k) => ({ text: k === 1 ? ' ✓' : '', bytes: null, run: '✓', lost: true })));
    // Two characters made of six lost bytes, then a token that is one of those characters: the bytes take both.
    expect(readTokens('a✓’’b', ['a', ...Array<string>(6).fill('\ufffd'), '’', 'b']).tokens.map((t) => t.text)).toEqual([
      'a',
      '✓’',
      '',
      '',
      '',
      '',
      '',
      '’',
      'b',
    ]);
    // Bytes the tokenizer could not decode either stay lost: shown as ⟨?⟩, never as bytes.
    expect(readTokens('a\ufffdb', ['a', '\ufffd', 'b']).tokens.map((t) => [t.text, t.run])).toEqual([
      ['a', null],
      ['⟨?⟩', '⟨?⟩'],
      ['b', null],
    ]);
    // More lost tokens than the characters there can hold (each held at least a byte): nothing is claimed, and the reply still reads whole.
    const tooMany = readTokens('a✓b', ['a', '\ufffd', '\ufffd', '\ufffd', '\ufffd', 'b']);
    expect(tooMany.tokens.map((t) => t.text)).toEqual(['a', '⟨?⟩', '⟨?⟩', '⟨?⟩', '⟨?⟩', 'b']);
    expect(tooMany.aligned).toBe(1);
    expect(readReply('a✓b', ['a', '\ufffd', '\ufffd', '\ufffd', '\ufffd', 'b'])).toBe('a✓b');
  });

  it('read as the reply comes, gives at every point the start of what it gives read whole', () => {
    const cases: [string, string[]][] = [
      ['He said’hi', ['He', 'said', b(0xe2), b(0x80), b(0x99), 'hi']],
      ['the ground\ufffd it bed.\u0007 the', ['the', 'ground', b(0xe2), 'it', 'bed', '.', b(0x07), 'the']],
      ['\ufffd\ufffd\ufffdx y', [b(0xe0), b(0x80), b(0xf0, 0x9f), b(0x98), 'x', 'y']],
      ['Once upon a time\u0007', ['Once', 'up', 'on', 'X', 'time']],
      ['heard Raches', ['he', 'ar', 'd', '', 'R', 'aches']],
      ['  two  spaces\nand ж', ['two', 'spaces', '\n', 'and', '', b(0xd0), b(0xb6)]],
      ['ok\ufffd', ['ok', b(0xe2), b(0x9c)]],
      ['a b', ['a', b(0x0a), 'b']],
    ];
    for (const [response, texts] of cases) {
      const whole = readReply(response, texts);
      // Each token comes before its text, which comes one character at a time.
      for (const lag of [0, 1, 3]) {
        const reader = new TokenReader();
        let out = '';
        let given = 0;
        for (let i = 0; i < texts.length + lag; i++) {
          const upTo = Math.min(response.length, Math.round(((i + 1 - lag) / texts.length) * response.length));
          reader.add(response.slice(given, Math.max(given, upTo)), i < texts.length ? [texts[i]] : []);
          given = Math.max(given, upTo);
          out += reader.take();
          expect(whole.startsWith(out), `${JSON.stringify(out)} of ${JSON.stringify(whole)}`).toBe(true);
        }
        reader.add(response.slice(given));
        reader.finish();
        expect(out + reader.take()).toBe(whole);
      }
    }
  });
});
