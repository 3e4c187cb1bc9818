import type { Problem } from './problem';

/**
 * Plain story beginnings for the storyteller scenario. Models trained on TinyStories have no chat
 * template; they continue text, so the "task" is the first words of a story about the subject.
 *
 * Three disjoint sets: a run's sessions start from `training` openings, its personalization
 * score is taken on `evaluation` openings, and the demo model was fine-tuned on `fine-tuning`
 * openings only, so a gain on the evaluation set is one on beginnings neither the run nor the
 * model's own fine-tuning has seen. No opening names a pet or a thing a child may ask for.
 */
export const OPENING_SETS = ['evaluation', 'training', 'fine-tuning'] as const;
export type OpeningSet = (typeof OPENING_SETS)[number];

const OPENINGS: Record<OpeningSet, readonly string[]> = {
  evaluation: [
    'Once upon a time, there was a little {subject}.',
    'One sunny day, a happy {subject} went to the park.',
    'Once upon a time, a {subject} lived in a small house with a big garden.',
    'One night, a sleepy {subject} looked up at the moon.',
    'One morning, a little {subject} woke up early.',
    'Once upon a time, a {subject} and a bird were best friends.',
    'It was raining, and a small {subject} sat by the window.',
    'One day, a {subject} wanted to see the sea.',
    'Once upon a time, a {subject} went for a long walk.',
    'One evening, a little {subject} heard a soft sound in the garden.',
    'There once was a curious {subject} who lived near a farm.',
    'On a windy day, a {subject} went outside to play.',
  ],
  training: [
    'Once upon a time, there was a happy {subject}.',
    'One day, a little {subject} went to the forest.',
    'A {subject} lived in a big red house.',
    'One cold morning, a {subject} looked out of the door.',
    'Once upon a time, a small {subject} had a best friend.',
    'It was a warm day, and a {subject} sat in the sun.',
    'One afternoon, a {subject} walked down the road.',
    'Once upon a time, a {subject} lived by a river.',
    'A little {subject} liked to run in the grass.',
    'One day, a {subject} met a new friend at the pond.',
    'Once upon a time, there was a {subject} who was very small.',
    'Early one morning, a {subject} went to see the hills.',
  ],
  'fine-tuning': [
    'Once upon a time, there was a {subject}.',
    'One day, a {subject} went to the park.',
    'Once upon a time, a {subject} lived in a tree.',
    'One night, a {subject} could not sleep.',
    'One morning, a {subject} went to the shop with mom.',
    'Once upon a time, a {subject} lived with a kind girl.',
    'It was snowing, and a {subject} wanted to go out.',
    'One day, a {subject} was playing in the yard.',
    'Once upon a time, a {subject} had a little house.',
    'One summer day, a {subject} went to the beach.',
    'Once upon a time, there was a big {subject}.',
    'A {subject} and a boy went to the garden.',
    'One day, a young {subject} saw a rainbow.',
    'Once upon a time, a {subject} found a path in the woods.',
    'One evening, a {subject} sat with its family.',
    'Once upon a time, a {subject} lived on a boat.',
    'One day, a {subject} was hungry.',
    'Once upon a time, a {subject} wanted to fly.',
    'Every day, a {subject} went to the lake.',
    'Once upon a time, a funny {subject} lived in a town.',
    'One spring day, a {subject} saw a butterfly.',
    'Once upon a time, a {subject} lived with an old man.',
    'One day, a {subject} heard a loud noise.',
    'Once upon a time, a brave {subject} climbed a hill.',
  ],
};

export function storyOpenings(subject: string, set: OpeningSet = 'evaluation'): Problem[] {
  const article = /^[aeiou]/i.test(subject) ? 'an' : 'a';
  const prefix = set === 'evaluation' ? 'story' : `story-${set}`;
  return OPENINGS[set].map((template, index) => ({
    id: `${prefix}#${index}`,
    question: template
      .replaceAll(/\bA \{subject\}/g, `${article.charAt(0).toUpperCase()}${article.slice(1)} ${subject}`)
      .replaceAll('a {subject}', `${article} ${subject}`)
      .replaceAll('{subject}', subject),
    answer: '',
  }));
}
