import type { Problem } from './problem';

/**
 * Plain story beginnings for the storyteller scenario. Models trained on TinyStories have no chat
 * template; they continue text, so the "task" is the first words of a story about the subject.
 */
const OPENINGS = [
  'Once upon a time, there was a little {subject}.',
  'One sunny day, a happy {subject} went to the park.',
  'Once upon a time, a {subject} lived in a small house with a big garden.',
  'One night, a sleepy {subject} looked up at the moon.',
  'Once upon a time, there was a {subject} who loved to play with a red ball.',
  'One morning, a little {subject} found a shiny stone.',
  'Once upon a time, a {subject} and a bird were best friends.',
  'It was raining, and a small {subject} sat by the window.',
  'Once upon a time, there was a kind {subject} named Sam.',
  'One day, a {subject} wanted to see the sea.',
  'Once upon a time, a {subject} found a box under the tree.',
  'One evening, a little {subject} heard a soft sound in the garden.',
] as const;

export function storyOpenings(subject: string): Problem[] {
  const article = /^[aeiou]/i.test(subject) ? 'an' : 'a';
  return OPENINGS.map((template, index) => ({
    id: `story#${index}`,
    question: template.replaceAll('a {subject}', `${article} ${subject}`).replaceAll('{subject}', subject),
    answer: '',
  }));
}
