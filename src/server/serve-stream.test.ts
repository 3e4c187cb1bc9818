import { beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { join } from 'node:path';
import { mulberry32 } from '../gpu/random';
import { DirSource, packageRoot } from '../models/source-node';
import { Tokenizer } from '../models/tokenizer';
import { isReadable, readReply } from '../rl/readable-text';
import { replyMessage } from '../rl/tool-calls';
import { ReadableReplyStream, ReplyStream, type ReplyPiece } from './serve-stream';

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await Tokenizer.load(new DirSource((await tinyModel({ family: 'qwen3' })).dir));
});

/**
 * Streams `ids` as a policy would draw them; the pieces sent while generating, and the reply's
 * content. `readable`: as serve sends them, through the lab's reader (ReadableReplyStream).
 */
function streamed(ids: number[], o: { stops?: string[]; toolCalls?: boolean; readable?: boolean } = {}, tok: Tokenizer = tokenizer) {
  const stops = o.stops ?? [];
  const toolCalls = o.toolCalls ?? false;
  const pieces: ReplyPiece[] = [];
  const live = new (o.readable ? ReadableReplyStream : ReplyStream)(tok, { stops, toolCalls }, (p) => pieces.push(p));
  // What the policy's reply is: the whole decode, cut before the first stop (generate.ts).
  let text = '';
  const drawn: number[] = [];
  const sentSoFar: string[] = [];
  for (const id of ids) {
    drawn.push(id);
    live.token(id, -0.5);
    sentSoFar.push(pieces.map((p) => p.content).join(''));
    text = tok.decode(drawn);
    if (stops.some((s) => text.includes(s))) break;
  }
  for (const s of stops) if (text.includes(s)) text = text.slice(0, text.indexOf(s));
  const message = replyMessage(text, toolCalls, 'call');
  const whileGenerating = pieces.length;
  const rest = live.finish(message.content);
  pieces.push(rest);
  const content = pieces.map((p) => p.content).join('');
  return { pieces, whileGenerating, sentSoFar, content, message, drawn };
}

describe('a reply streamed as its tokens are drawn', () => {
  it('sends text as it becomes final, never a split character, and all of it adds up to the reply', () => {
    const text = 'Naïve café: 😀 日本語のテキスト 🇯🇵 and ASCII words, with “quotes” and ∑ symbols.';
    const ids = tokenizer.encode(text, false);
    const { pieces, whileGenerating, content } = streamed(ids);
    expect(content).toBe(text);
    expect(whileGenerating).toBeGreaterThan(10);
    for (const p of pieces) expect(p.content).not.toContain('\uFFFD');
    // Every token goes out once, with its log-prob and its own text, in order.
    expect(pieces.flatMap((p) => p.tokenIds)).toEqual(ids);
    expect(pieces.flatMap((p) => p.logprobs)).toEqual(ids.map(() => -0.5));
    // As records keep them: a byte token in byte notation, never a "�" decoded alone.
    expect(pieces.flatMap((p) => p.tokenTexts)).toEqual(tokenizer.tokenTexts(ids));
  });

  it('adds up to the reply for random tokens, whose bytes split characters anywhere, with byte-level and SentencePiece tokenizers', async () => {
    // stories260K: Llama's SentencePiece decoding (byte fallback, the first space stripped) beside Qwen3's byte-level BPE.
    const llama = await Tokenizer.load(new DirSource(dataPath('models/stories260K')));
    const rand = mulberry32(7);
    for (const [tok, vocab] of [
      [tokenizer, 151_600],
      [llama, 512],
    ] as const) {
      for (let trial = 0; trial < 30; trial++) {
        const ids = Array.from({ length: 24 }, () => Math.floor(rand() * vocab));
        const { content, drawn } = streamed(ids, {}, tok);
        expect(content).toBe(tok.decode(drawn));
      }
    }
  });

  it('sends what decoding the whole reply at every token would send, at the same tokens, over long replies', async () => {
    // The definition the windowed decoding must keep: the text two whole decodes in a row agree
    // on, less a trailing U+FFFD, a stop and what may start one, a tool call tag and what may
    // start one (with the whitespace before it), sent as soon as it grows.
    const llama = await Tokenizer.load(new DirSource(dataPath('models/stories260K')));
    const wholeDecodeSends = (tok: Tokenizer, ids: number[], stops: string[], toolCalls: boolean) => {
      const held = (text: string, words: string[]) =>
        Math.max(0, ...words.flatMap((w) => [...w].map((_, k) => (k > 0 && text.endsWith(w.slice(0, k)) ? k : 0))));
      let last = '';
      let sent = '';
      return ids.map((_, n) => {
        const now = tok.decode(ids.slice(0, n + 1));
        let i = 0;
        while (i < Math.min(last.length, now.length) && last[i] === now[i]) i++;
        let text = now.slice(0, i).replace(/\uFFFD+$/, '');
        last = now;
        for (const s of stops) if (text.includes(s)) text = text.slice(0, text.indexOf(s));
        text = text.slice(0, text.length - held(text, stops));
        if (toolCalls) {
          const open = text.indexOf('<tool_call>');
          text = (open >= 0 ? text.slice(0, open) : text.slice(0, text.length - held(text, ['<tool_call>']))).trimEnd();
        }
        if (text.length > sent.length && text.startsWith(sent)) sent = text;
        return sent;
      });
    };
    const rand = mulberry32(11);
    const prose = 'Once upon a time, a little dog named Max found a red ball. "Can I play?" he asked. END ';
    for (const [tok, vocab] of [
      [tokenizer, 151_600],
      [llama, 512],
    ] as const) {
      const cases: { ids: number[]; stops: string[]; toolCalls: boolean }[] = [
        { ids: tok.encode(prose.repeat(8), false), stops: [], toolCalls: false },
        { ids: tok.encode(`${prose.repeat(4)}then more`, false), stops: ['END', 'Max found'], toolCalls: false },
        { ids: tok.encode(`${prose.repeat(4)}\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>`, false), stops: [], toolCalls: true },
        ...Array.from({ length: 6 }, () => ({ ids: Array.from({ length: 120 }, () => Math.floor(rand() * vocab)), stops: [], toolCalls: false })),
      ];
      for (const c of cases) {
        const { sentSoFar } = streamed(c.ids, { stops: c.stops, toolCalls: c.toolCalls }, tok);
        expect(sentSoFar).toEqual(wholeDecodeSends(tok, c.ids, c.stops, c.toolCalls).slice(0, sentSoFar.length));
      }
      // And each token costs the same however long the reply: no decode of more than a window.
      let longest = 0;
      const counting = {
        decode: (ids: ArrayLike<number>, skip?: boolean) => ((longest = Math.max(longest, ids.length)), tok.decode(ids, skip)),
        tokenTexts: (ids: readonly number[]) => tok.tokenTexts(ids),
      };
      const live = new ReplyStream(counting, { stops: [], toolCalls: false }, () => {});
      for (const id of cases[0].ids) live.token(id, 0);
      expect(cases[0].ids.length).toBeGreaterThan(150);
      expect(longest).toBeLessThanOrEqual(13);
    }
  });

  it('waits a token for text the next one may rewrite: a lone space that clean-up joins to the punctuation after it', () => {
    // As a SentencePiece vocabulary decodes with clean_up_tokenization_spaces on: "world ," becomes "world,".
    const vocab = ['Hello', '▁world', '▁', ',', '▁again'];
    const cleanUp = {
      decode: (ids: ArrayLike<number>) =>
        Array.from(ids, (i) => vocab[i])
          .join('')
          .replaceAll('▁', ' ')
          .replace(/ ,/g, ','),
      tokenTexts: (ids: readonly number[]) => ids.map((i) => vocab[i].replaceAll('▁', ' ')),
    };
    const pieces: ReplyPiece[] = [];
    const live = new ReplyStream(cleanUp, { stops: [], toolCalls: false }, (p) => pieces.push(p));
    const ids = [0, 1, 2, 3, 4];
    const reply = cleanUp.decode(ids);
    for (const id of ids) {
      live.token(id, 0);
      expect(reply.startsWith(pieces.map((p) => p.content).join(''))).toBe(true);
    }
    pieces.push(live.finish(reply));
    expect(pieces.map((p) => p.content).join('')).toBe('Hello world, again');
  });

  it('never sends text past a stop string, nor the start of one that may still complete', () => {
    const text = 'The answer is forty-two. END of the reply, never sent.';
    const ids = tokenizer.encode(text, false);
    const { content, sentSoFar, whileGenerating } = streamed(ids, { stops: ['END', 'XYZ'] });
    expect(content).toBe('The answer is forty-two. ');
    expect(whileGenerating).toBeGreaterThan(1);
    for (const sent of sentSoFar) expect('The answer is forty-two. '.startsWith(sent)).toBe(true);
    // A stop the tokens spell in pieces: its first pieces wait too.
    const spelled = streamed(tokenizer.encode('The answer is forty-two, final.', false), { stops: ['forty-two'] });
    expect(spelled.content).toBe('The answer is ');
    for (const sent of spelled.sentSoFar) expect('The answer is '.startsWith(sent)).toBe(true);
    // A stop inside another that began earlier: the reply ends at the inner one, and its start was never sent.
    const overlap = streamed(tokenizer.encode('one two three four', false), { stops: ['three four', 'hree'] });
    expect(overlap.content).toBe('one two t');
    for (const sent of overlap.sentSoFar) expect('one two t'.startsWith(sent)).toBe(true);
  });

  it('holds back what may be a tool call tag, and sends the prose before a call without the call', () => {
    const written = 'Let me read the file first.\n<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>';
    const { content, sentSoFar, whileGenerating, message } = streamed(tokenizer.encode(written, false), { toolCalls: true });
    expect(message.tool_calls).toEqual([{ id: 'call_0', type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } }]);
    expect(content).toBe('Let me read the file first.');
    expect(whileGenerating).toBeGreaterThan(1);
    for (const sent of sentSoFar) {
      expect('Let me read the file first.'.startsWith(sent)).toBe(true);
      expect(sent).not.toContain('<');
    }
    // The tag spelled in ordinary tokens rather than its own: its start waits all the same.
    const pieces = [...tokenizer.encode('Let me look. <tool', false), ...tokenizer.encode('_call>{"name": "ls", "arguments": {}}</tool_call>', false)];
    const spelledTag = streamed(pieces, { toolCalls: true });
    expect(spelledTag.message.tool_calls).toHaveLength(1);
    expect(spelledTag.content).toBe('Let me look.');
    for (const sent of spelledTag.sentSoFar) expect('Let me look.'.startsWith(sent)).toBe(true);
    // Text that only looks like the start of a tag goes out once it is not one; a block that is no call stays text.
    const notATag = 'a <tool_x> b <tool_call>not json</tool_call> c';
    const plain = streamed(tokenizer.encode(notATag, false), { toolCalls: true });
    expect(plain.message.tool_calls).toBeUndefined();
    expect(plain.content).toBe(notATag);
    expect(plain.sentSoFar.some((s) => s.includes('<tool_x>'))).toBe(true);
    // Without parsing, the tag is text like any other.
    expect(streamed(tokenizer.encode(written, false)).sentSoFar.some((s) => s.includes('<tool_call>'))).toBe(true);
  });
});

describe('a reply streamed as a person reads it', () => {
  it("sends the demo model's byte tokens as the characters they make once made, bytes that make none as escapes, and adds up to the reply shown whole", async () => {
    const demo = await Tokenizer.load(new DirSource(join(packageRoot(), 'public/models/storyteller-demo')));
    const written = demo.encode('It’s ✓ 日本 😀 ok', false);
    const bel = demo.encode('\u0007', false).at(-1)!;
    const check = demo.encode('✓', false).slice(1);
    // A BEL, then a ✓ cut after two of its three bytes (a token limit).
    const ids = [...written, bel, ...check.slice(0, 2)];
    const texts = demo.tokenTexts(ids);
    // ✓, 日本 and 😀 are not among the demo model's 512 pieces: its tokenizer writes their bytes.
    expect(texts.filter((t) => t.startsWith('<0x')).length).toBe(3 + 6 + 4 + 1 + 2);
    expect(demo.decode(ids)).toBe('It’s ✓ 日本 😀 ok\u0007\ufffd');
    const { pieces, whileGenerating, content, sentSoFar } = streamed(ids, { readable: true }, demo);
    const shown = 'It’s ✓ 日本 😀 ok⟨0x07⟩⟨0xE2⟩⟨0x9C⟩';
    expect(readReply(demo.decode(ids), texts)).toBe(shown);
    expect(content).toBe(shown);
    expect(whileGenerating).toBeGreaterThan(5);
    for (const p of pieces) expect(isReadable(p.content), p.content).toBe(true);
    for (const sent of sentSoFar) expect(shown.startsWith(sent)).toBe(true);
    // Each character goes out whole, once its last byte is drawn (and the token after it shows its run ended).
    expect(sentSoFar.some((s) => s.endsWith('✓'))).toBe(true);
    expect(sentSoFar.some((s) => s.endsWith('😀'))).toBe(true);
    // Every token goes out once, as records keep it.
    expect(pieces.flatMap((p) => p.tokenIds)).toEqual(ids);
    expect(pieces.flatMap((p) => p.tokenTexts)).toEqual(texts);
  });

  it('adds up to the reply shown whole for random tokens, with byte-level and SentencePiece tokenizers, never sending "�" or a control byte', async () => {
    const demo = await Tokenizer.load(new DirSource(join(packageRoot(), 'public/models/storyteller-demo')));
    const rand = mulberry32(13);
    for (const [tok, vocab] of [
      [tokenizer, 151_600],
      [demo, 512],
    ] as const) {
      for (let trial = 0; trial < 30; trial++) {
        const ids = Array.from({ length: 24 }, () => Math.floor(rand() * vocab));
        const { pieces, content, drawn, sentSoFar } = streamed(ids, { readable: true }, tok);
        const whole = readReply(tok.decode(drawn), tok.tokenTexts(drawn));
        expect(content).toBe(whole);
        for (const sent of sentSoFar) expect(whole.startsWith(sent)).toBe(true);
        for (const p of pieces) expect(isReadable(p.content), p.content).toBe(true);
      }
    }
  });
});
