import { describe, expect, it } from 'vitest';
import { byteTokenBytes, byteTokenText, readable, readReply, readTokens } from './readable-text';

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
});
