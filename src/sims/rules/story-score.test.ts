/**
 * The storyteller's score reads a reply as a story: stuffing meets no wish, a story for another
 * child meets none of this child's own, and the demo model's real stories still read as stories.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORY_MODEL } from '../../models/bundled';
import { CpuBackend } from '../../gpu/cpu/backend';
import { Policy } from '../../gpu/policy';
import { modelSource } from '../../models/source-node';
import { storyOpenings } from '../problems/story-openings';
import { normaliseChild } from '../scenarios/storyteller';
import { evaluatorScore, rateStory, readStory, storyEvaluationScores, storyKeywordScore, storyScore } from './story-score';

const dog = normaliseChild({ subject: 'dog', name: 'Max', favourite: 'ball' });
const opening = 'Once upon a time, there was a little dog.';
const score = (reply: string, start = opening) => storyScore(readStory(dog, start, reply));

const GOOD =
  'The dog was called Max. Max found a red ball in the garden and played with it. He shared the ball with his friend the cat, and they hugged. At night Max was sleepy and went to sleep in his bed.';

describe('the storyteller score', () => {
  it('gives a story that meets every wish full marks, and reads each wish on its own', () => {
    expect(readStory(dog, opening, GOOD)).toEqual({ story: true, pet: true, name: true, favourite: true, sleep: true, gentle: true });
    expect(score(GOOD)).toBe(1);
    expect(rateStory(dog, opening, GOOD).score).toBe(1);
  });

  it('scores keyword stuffing 0, where the old keyword score gave it marks', () => {
    const stuffed = [
      'Max ball happy sleep',
      'dog Max ball sleep kind friends hug happy bed dream nice love smile share',
      'The dog was very happy. '.repeat(5),
      'Max went to sleep. '.repeat(6),
      'and the dog was happy '.repeat(6),
      'Max sleeps.',
      'Max.',
    ];
    for (const reply of stuffed) {
      expect(readStory(dog, opening, reply).story, reply).toBe(false);
      expect(score(reply), reply).toBe(0);
      expect(rateStory(dog, opening, reply).reason, reply).toMatch(/not a story/);
    }
    // What the keyword score made of them: full marks for four words, and marks for a sentence repeated.
    expect(storyKeywordScore(dog, 'Max ball happy sleep')).toBe(1);
    expect(storyKeywordScore(dog, 'The dog was very happy. '.repeat(5))).toBeGreaterThan(0);
  });

  it('scores a reply that ignores the opening 0', () => {
    const elsewhere = 'The rocket flew up into the sky. The astronaut saw stars and planets. She landed on Mars and waved.';
    expect(readStory(dog, opening, elsewhere).story).toBe(false);
    expect(rateStory(dog, opening, elsewhere).reason).toMatch(/ignores the beginning/);
    // The same reply goes on from an opening that has its place in it.
    expect(readStory(dog, 'One night, a sleepy dog looked up at the sky.', elsewhere).story).toBe(true);
  });

  it('takes one step of the evaluator scale off for each wish missed', () => {
    // Pet, name and sleep met; no ball, and a sad part: 3 of 5, two steps down.
    const sad = 'Max the dog was sad and cried. Then his friend came and they hugged, and Max went to sleep.';
    const reading = readStory(dog, opening, sad);
    expect(reading).toEqual({ story: true, pet: true, name: true, favourite: false, sleep: true, gentle: false });
    expect(storyScore(reading)).toBeCloseTo(0.6);
    expect(evaluatorScore(reading)).toBe(0.5);
    expect(rateStory(dog, opening, sad)).toEqual({
      score: 0.5,
      reason: "The story misses some of the child's wishes: no ball in it and it is not kind and gentle.",
    });
  });

  it("reads the demo model's own greedy stories as a reader does", () => {
    // Written by the bundled demo model, greedy, 96 tokens, on evaluation openings: with the
    // judge's hint for the name, the ball and bedtime, then without it.
    const stories = [
      {
        start: 'There once was a curious dog who lived near a farm.',
        reply:
          'One day, Max found a ball. He wanted to go to the park. He picked it up and picked it up. He picked it up and put it in the ball.\nMax was very happy. He wanted to play with it.\nMax said good night and went to sleep.gly',
        reading: { story: true, pet: true, name: true, favourite: true, sleep: true, gentle: true },
      },
      {
        // Max goes to sleep in the middle, then the story goes on: it does not end in sleep.
        start: 'One night, a sleepy dog looked up at the moon.',
        reply:
          'Max had a favourite ball. He wanted to play with the ball. Max was tired, so Max went to sleep. He wanted to play with the ball.\nMax said, "I will help you."\nMax said, "I will help you."\nMax said, "',
        reading: { story: true, pet: true, name: true, favourite: true, sleep: false, gentle: true },
      },
      {
        start: 'Once upon a time, a dog lived in a small house with a big garden.',
        reply:
          'The dog loved to play with a ball. One day, the dog found a ball. The dog was very happy. The dog was very happy.\nThe dog wanted to play with the ball. The dog wanted to play with the ball. The dog wanted to play with the ball. The dog was tired, so the dog went to sleep',
        reading: { story: true, pet: true, name: false, favourite: true, sleep: true, gentle: true },
      },
      {
        // One sentence six times over, about the park, not the dog.
        start: 'One sunny day, a happy dog went to the park.',
        reply:
          'The park was very sleepy and went to sleep. The park was very happy. The park was very happy. The park was very happy.\nThe party was tired, so the park went to sleep. The park was very happy. The park was very happy. The park was very happy. The par',
        reading: { story: false, pet: false, name: false, favourite: false, sleep: false, gentle: false },
      },
    ];
    for (const { start, reply, reading } of stories) expect(readStory(dog, start, reply), reply).toEqual(reading);
  });

  it("meets none of this child's own wishes with a story written for another child", () => {
    const start = 'One sunny day, a happy dog went to the park.';
    const forTheCatChild =
      'There was a cat named Tom at the park. Tom had a red hat and played with it all day. He shared his hat with his friends and they hugged. At night Tom went to sleep in his warm bed.';
    const reading = readStory(dog, start, forTheCatChild);
    expect(reading.story).toBe(true);
    expect(reading).toMatchObject({ pet: false, name: false, favourite: false });
  });

  it("takes the name as the pet's only where the story gives it to the pet, and sleep only at the end", () => {
    const boy =
      'A boy named Max lived next door. The dog played with a ball in the garden. The dog and the boy were friends and they hugged. Then the dog went to sleep.';
    expect(readStory(dog, opening, boy)).toMatchObject({ story: true, pet: true, name: false, favourite: true, sleep: true });
    const sleepFirst =
      'Max the dog went to bed early. In the morning he ran to the park. He played ball with his friends and they smiled all day long in the sun.';
    expect(readStory(dog, opening, sleepFirst)).toMatchObject({ story: true, name: true, sleep: false });
  });

  it('reports each wish as a rate over the evaluation stories, beside the old keyword score', () => {
    const scores = storyEvaluationScores(dog, [
      { question: opening, answer: GOOD },
      { question: opening, answer: 'Max ball happy sleep' },
    ]);
    expect(scores).toMatchObject({ story: 0.5, 'wish:pet': 0.5, 'wish:name': 0.5, 'wish:favourite': 0.5, 'wish:sleep': 0.5, 'wish:gentle': 0.5 });
    expect(scores.keywords).toBe(1);
  });
});

describe("the storyteller score on the demo model's own stories", () => {
  let stories: { question: string; answer: string }[];

  beforeAll(async () => {
    const demo = await Policy.load(modelSource(DEMO_STORY_MODEL), new CpuBackend());
    const openings = storyOpenings('dog', 'evaluation').map((p) => p.question);
    const greedy = await demo.generate(openings, { maxNewTokens: 96 });
    const sampled = await demo.generate(openings, { maxNewTokens: 96, sampling: { temperature: 1, topP: 1, topK: 0 }, seeds: openings.map((_, i) => 40 + i) });
    stories = [...greedy, ...sampled].map((g, i) => ({ question: openings[i % openings.length], answer: g.text }));
  }, 300_000);

  it('reads most of them as stories, and finds wishes in them as the base score of a run does', () => {
    const scores = storyEvaluationScores(dog, stories);
    // Measured on this build: 21 of the 24 read as stories; the other three repeat one sentence
    // ("The park was very happy." eight times), or leave the dog for a cup, or for broken words.
    expect(scores.story).toBeGreaterThanOrEqual(0.8);
    // Without a hint the model writes a dog (0.29), kind words (0.5) and bedtime endings (0.33)
    // now and then, and never "Max".
    expect(scores['wish:pet']).toBeGreaterThan(0.1);
    expect(scores['wish:gentle']).toBeGreaterThan(0.1);
    expect(scores['wish:name']).toBe(0);
  });
});
