import { describe, it, expect } from 'vitest';
import { appendHint, hintInFront, parseHintVote, selectBestHint, splitHint, type HintVote } from './hints';
import type { ChatMessage } from './messages';

describe('parseHintVote', () => {
  const cases: [string, string, HintVote][] = [
    ['accepted with hint', '\\boxed{1}\n[HINT_START] Use plain sentences. [HINT_END]', { score: 1, hint: 'Use plain sentences.' }],
    ['rejected, no block', 'nothing new here \\boxed{-1}', { score: -1, hint: null }],
    ['no box, hint only', '[HINT_START]Add units.[HINT_END]', { score: null, hint: 'Add units.' }],
    ['last of several blocks', '[HINT_START]a[HINT_END] [HINT_START]b[HINT_END] \\boxed{1}', { score: 1, hint: 'b' }],
    ['block without end marker', '\\boxed{1} [HINT_START] Show the steps', { score: 1, hint: null }],
    ['unfinished block after a complete one', '[HINT_START]done[HINT_END] \\boxed{1} [HINT_START]cut o', { score: 1, hint: 'done' }],
    ['a later start replaces an unclosed one', '[HINT_START] a [HINT_START] b [HINT_END]', { score: null, hint: 'b' }],
    ['stray end marker ignored', '[HINT_END] x [HINT_START]y[HINT_END]', { score: null, hint: 'y' }],
    ['empty block', '\\boxed{1}[HINT_START]  [HINT_END]', { score: 1, hint: '' }],
    ['multi-line hint', '\\boxed{1}[HINT_START]\nLine one.\nLine two.\n[HINT_END]', { score: 1, hint: 'Line one.\nLine two.' }],
    ['several boxes, nested braces', '\\boxed{-1} hmm \\boxed{{1}} [HINT_START]Be brief.[HINT_END]', { score: 1, hint: 'Be brief.' }],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(parseHintVote(text)).toEqual(expected);
  });

  // A megabyte or more each: a scan that goes back over the text (n^2 = 1e12 steps) would run
  // for hours, far past the test's timeout, where a linear one takes milliseconds.
  const big: [string, () => string, HintVote][] = [
    ['1 MB answer', () => 'w'.repeat(1_000_000) + '\\boxed{1}[HINT_START]Say less.[HINT_END]', { score: 1, hint: 'Say less.' }],
    ['many start markers, no end', () => '[HINT_START]'.repeat(100_000), { score: null, hint: null }],
    ['many marker prefixes', () => '[HINT_'.repeat(200_000) + '[HINT_START]ok[HINT_END]', { score: null, hint: 'ok' }],
  ];
  it.each(big)('%s: linear and defined', (_name, make, expected) => {
    expect(parseHintVote(make())).toEqual(expected);
  });
});

describe('selectBestHint', () => {
  const cases: [string, HintVote[], string | null][] = [
    [
      'longest accepted hint',
      [
        { score: 1, hint: 'Write no bold text.' },
        { score: 1, hint: 'Use plain sentences, never numbered lists.' },
        { score: 1, hint: 'short' },
      ],
      'Use plain sentences, never numbered lists.',
    ],
    ['exactly 10 characters is too short', [{ score: 1, hint: '0123456789' }], null],
    ['11 characters is enough', [{ score: 1, hint: '0123456789a' }], '0123456789a'],
    ['length counted after stripping', [{ score: 1, hint: '   0123456789   ' }], null],
    ['returned stripped', [{ score: 1, hint: '  Say it kindly.  ' }], 'Say it kindly.'],
    ['rejected vote ignored', [{ score: -1, hint: 'A long hint that was rejected.' }], null],
    ['failed vote ignored', [{ score: null, hint: 'A long hint without a box.' }], null],
    ['ambiguous vote ignored', [{ score: 0, hint: 'A long hint with a zero box.' }], null],
    ['vote without hint', [{ score: 1, hint: null }], null],
    [
      'tie keeps the first',
      [
        { score: 1, hint: 'first hint!!' },
        { score: 1, hint: 'other hint!!' },
      ],
      'first hint!!',
    ],
    ['emoji count as one character each (6)', [{ score: 1, hint: '\u{1F600}'.repeat(6) }], null],
    ['emoji count as one character each (11)', [{ score: 1, hint: '\u{1F600}'.repeat(11) }], '\u{1F600}'.repeat(11)],
    ['no votes', [], null],
  ];
  it.each(cases)('%s', (_name, votes, expected) => {
    expect(selectBestHint(votes)).toBe(expected);
  });

  it('takes a different minimum length', () => {
    expect(selectBestHint([{ score: 1, hint: 'abc' }], 2)).toBe('abc');
    expect(selectBestHint([{ score: 1, hint: 'abc' }], 3)).toBeNull();
  });
});

describe('appendHint', () => {
  const H = "[user's hint / instruction]";
  const sys: ChatMessage = { role: 'system', content: 'S' };
  const cases: [string, ChatMessage[], string, Parameters<typeof appendHint>[2], ChatMessage[]][] = [
    [
      'last user message gets the hint',
      [sys, { role: 'user', content: 'Q1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: 'Redo it' }],
      'Use no lists.',
      {},
      [sys, { role: 'user', content: 'Q1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: `Redo it\n\n${H}\nUse no lists.` }],
    ],
    [
      'last user message is not the last message',
      [
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: 'A' },
        { role: 'tool', content: 'T' },
      ],
      'Check the tool output.',
      {},
      [
        { role: 'user', content: `Q\n\n${H}\nCheck the tool output.` },
        { role: 'assistant', content: 'A' },
        { role: 'tool', content: 'T' },
      ],
    ],
    [
      'no user message: a new user message',
      [sys, { role: 'tool', content: 'T' }],
      'H1',
      {},
      [sys, { role: 'tool', content: 'T' }, { role: 'user', content: `${H}\nH1` }],
    ],
    [
      'no user message, reference placement',
      [sys, { role: 'tool', content: 'T' }],
      'H1',
      { noUserMessage: 'last-message' },
      [sys, { role: 'tool', content: `T\n\n${H}\nH1` }],
    ],
    ['no messages at all', [], 'H1', { noUserMessage: 'last-message' }, [{ role: 'user', content: `${H}\nH1` }]],
    ['trimmed like the reference', [{ role: 'user', content: '  Q  ' }], '  H1  ', {}, [{ role: 'user', content: `Q  \n\n${H}\nH1` }]],
    [
      'untrimmed, byte for byte as the paper writes it',
      [{ role: 'user', content: '  Q  ' }],
      '  H1  ',
      { trim: false },
      [{ role: 'user', content: `  Q  \n\n${H}\n  H1  ` }],
    ],
  ];
  it.each(cases)('%s', (_name, messages, hint, options, expected) => {
    expect(appendHint(messages, hint, options)).toEqual(expected);
  });

  it('never mutates its input', () => {
    const messages: ChatMessage[] = [sys, { role: 'user', content: 'Q' }];
    const before = structuredClone(messages);
    Object.freeze(messages);
    messages.forEach((m) => Object.freeze(m));
    const out = appendHint(messages, 'A useful hint.');
    expect(messages).toEqual(before);
    expect(out).not.toBe(messages);
    expect(out[0]).not.toBe(messages[0]);
  });
});

describe('splitHint', () => {
  it('takes back exactly the hint appendHint wrote, and finds none in a plain message', () => {
    const [withHint] = appendHint([{ role: 'user', content: 'Once upon a time.' }], '  Call the dog Max.  ');
    expect(splitHint(withHint.content)).toEqual({ text: 'Once upon a time.', hint: 'Call the dog Max.' });
    expect(splitHint('Once upon a time.')).toEqual({ text: 'Once upon a time.', hint: null });
    expect(hintInFront('Call the dog Max.', 'Once upon a time.')).toBe('Call the dog Max.\n\nOnce upon a time.');
  });
});
