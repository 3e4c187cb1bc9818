import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from './cpu/backend';
import { generate } from './generate';
import { Policy } from './policy';
import { score } from './score';
import { DirSource } from '../models/source-node';

const stories = dataPath('models/stories260K');
const tiny656 = dataPath('models/TinyStories-656K');

describe('stories260K on the CPU reference backend', () => {
  it('tokenizes and greedily continues "Once upon a time" exactly as SOURCE.md documents', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    expect(policy.promptIds('Once upon a time')).toEqual([1, 403, 407, 261, 378]);
    const [g] = await policy.generate(['Once upon a time'], { maxNewTokens: 40 });
    expect(g.text.startsWith(', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.')).toBe(true);
  });

  it('scores its own greedy continuation with the log-probs generation reported', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    const prompt = policy.promptIds('Once upon a time');
    const [g] = await generate(policy.model, [prompt], { maxNewTokens: 24 });
    const [s] = await score(policy.model, [{ prompt, completion: g.tokens }]);
    expect(s.logprobs.length).toBe(g.tokens.length);
    s.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(g.logprobs[i], 4));
  });

  it('stops at a stop string (cut from the text) and at a stop token (kept in the tokens)', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    const [g] = await policy.generate(['Once upon a time'], { maxNewTokens: 40, stopStrings: ['Lily'] });
    expect(g.finishReason).toBe('stop');
    expect(g.text).toBe(', there was a little girl named ');
    const prompt = policy.promptIds('Once upon a time');
    const [full] = await generate(policy.model, [prompt], { maxNewTokens: 6 });
    const [cut] = await generate(policy.model, [prompt], { maxNewTokens: 40, stopIds: [full.tokens[3]] });
    expect(cut.tokens).toEqual(full.tokens.slice(0, 4));
    expect(cut.finishReason).toBe('stop');
  });

  it('gives each sequence of a padded batch the tokens it gets alone (greedy)', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    const prompts = ['Once upon a time', 'The cat', 'Tom and his mom went to the big'].map((p) => policy.promptIds(p));
    const batched = await generate(policy.model, prompts, { maxNewTokens: 12 });
    for (let i = 0; i < prompts.length; i++) {
      const [alone] = await generate(policy.model, [prompts[i]], { maxNewTokens: 12 });
      expect(batched[i].tokens).toEqual(alone.tokens);
      batched[i].logprobs.forEach((lp, j) => expect(lp).toBeCloseTo(alone.logprobs[j], 4));
    }
  });
});

describe('TinyStories-656K (tied embedding stored only as lm_head.weight)', () => {
  it('loads and continues "Once upon a time" as SOURCE.md documents', async () => {
    const policy = await Policy.load(new DirSource(tiny656), new CpuBackend());
    expect(policy.promptIds('Once upon a time')).toEqual([1, 80, 147, 201, 282, 57]);
    const [g] = await policy.generate(['Once upon a time'], { maxNewTokens: 30 });
    expect(g.text.startsWith(', a little girl named Lily lived in a small house with her mom, dad, and her dog, Spot,')).toBe(true);
  });
});

describe('a base model continues the task, with the latest request and any OPD hint in front of it', () => {
  it('renders one message, a later turn and a hinted teacher context', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    const task = 'Once upon a time, there was a little dog.';
    expect(policy.promptText([{ role: 'user', content: task }])).toBe(task);
    const later = [
      { role: 'user' as const, content: task },
      { role: 'assistant' as const, content: 'The dog ran.' },
      { role: 'user' as const, content: 'Hmm, my dog is called Max. Tell me a new one!' },
    ];
    // The model starts the story again, shown the person's latest words as a chat model would see them.
    const request = 'The user asked for a different answer: "Hmm, my dog is called Max. Tell me a new one!". Answer the way this request asks.';
    expect(policy.promptText(later)).toBe(`${request}\n\n${task}`);
    const { appendHint } = await import('../rl/hints');
    expect(policy.promptText(appendHint(later, 'Call the dog Max.'))).toBe(`${request} Call the dog Max.\n\n${task}`);
    expect(policy.promptText(appendHint([{ role: 'user', content: task }], 'Call the dog Max.'))).toBe(`Call the dog Max.\n\n${task}`);
    // A scenario whose replies are next states only: every turn continues the task afresh.
    const fresh = await Policy.load(new DirSource(stories), new CpuBackend(), { replies: 'none' });
    expect(fresh.promptText(later)).toBe(task);
    expect(fresh.promptText(appendHint(later, 'Call the dog Max.'))).toBe(`Call the dog Max.\n\n${task}`);
    // Only the latest request, and at most 200 characters of it: the story keeps its room.
    const third = [
      ...later,
      { role: 'assistant' as const, content: 'Max ran.' },
      { role: 'user' as const, content: `Where is the kite? ${'very '.repeat(60)}` },
    ];
    const shown = policy.promptText(third);
    expect(shown).not.toContain('Max. Tell');
    expect(shown.length).toBeLessThan(200 + request.length + task.length);
  });
});
