import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { readReply, readTokens } from '../rl/readable-text';
import { DirSource, packageRoot } from './source-node';
import { Tokenizer } from './tokenizer';

const demo = () => Tokenizer.load(new DirSource(join(packageRoot(), 'public/models/storyteller-demo')));

describe('token texts as records keep them', () => {
  it("keeps the demo model's byte tokens as their bytes, and reads them across seams as its tokenizer decodes", async () => {
    const tok = await demo();
    const id = (piece: string) => tok.encode(piece, false);
    // "ж" is not among the demo model's 512 pieces: its tokenizer writes it as two byte tokens.
    const accent = id('ж').slice(1);
    expect(tok.tokenTexts(accent)).toEqual(['<0xD0>', '<0xB6>']);
    const ids = [...id('the ground'), accent[0], ...id('it was scary. He went to bed.'), 7 + 3, ...id('the end'), ...accent];
    const texts = tok.tokenTexts(ids);
    const response = tok.decode(ids);
    // What the feed printed before: a U+FFFD for the lone byte and BEL itself.
    expect(response).toContain('\ufffd');
    expect(response).toContain('\u0007');
    expect(texts.filter((t) => t.startsWith('<0x'))).toEqual(['<0xD0>', '<0x07>', '<0xD0>', '<0xB6>']);
    expect(readReply(response, texts)).toBe('the ground⟨0xD0⟩ it was scary. He went to bed.⟨0x07⟩ the endж');
    const read = readTokens(response, texts);
    expect(read.aligned).toBe(ids.length);
    expect(read.tokens.at(-2)).toEqual({ text: 'ж', bytes: [0xd0], run: 'ж' });
    expect(read.tokens.at(-1)).toEqual({ text: '', bytes: [0xb6], run: 'ж' });
  });

  it('keeps a byte-level token that holds part of a character as its bytes, and one that is text as its text', async () => {
    const tok = await Tokenizer.load(new DirSource((await tinyModel({ family: 'qwen3' })).dir));
    const ids = tok.encode('a 🐶 dog', false);
    const texts = tok.tokenTexts(ids);
    expect(texts.some((t) => t.startsWith('<0x'))).toBe(true);
    expect(texts.join('')).not.toContain('\ufffd');
    expect(readReply(tok.decode(ids), texts)).toBe('a 🐶 dog');
  });
});
