/**
 * The pets, names and favourite things the demo model's training stories are relabeled with.
 * Each pool has a held-out part that training never sees, so tests can ask for a name or thing
 * the model has only ever met in a hint.
 */

import { pickFrom } from '../gpu/random';

export type Split = 'train' | 'heldOut';
export const SUBJECTS = [
  'dog',
  'cat',
  'frog',
  'bunny',
  'bird',
  'bear',
  'duck',
  'fish',
  'mouse',
  'puppy',
  'kitten',
  'pig',
  'horse',
  'lion',
  'owl',
  'fox',
  'little cat',
  'little dog',
  'cow',
  'sheep',
  'monkey',
  'turtle',
] as const;

export const NAMES = {
  train: [
    'Max',
    'Spot',
    'Lily',
    'Tim',
    'Sam',
    'Ben',
    'Sue',
    'Tom',
    'Mia',
    'Buddy',
    'Daisy',
    'Lucy',
    'Sara',
    'Anna',
    'Jack',
    'Bob',
    'Fluffy',
    'Coco',
    'Bella',
    'Rex',
    'Rosie',
    'Leo',
    'Milo',
    'Kitty',
    'Lulu',
    'Pip',
    'Ruby',
    'Toby',
    'Zoe',
    'Benny',
    'Molly',
    'Oscar',
    'Ollie',
    'Rocky',
    'Sunny',
    'Teddy',
    'Goldie',
    'Peanut',
    'Ginger',
    'Pepper',
    'Muffin',
    'Honey',
    'Bingo',
    'Duke',
    'Luna',
    'Jojo',
    'Fred',
    'Nina',
    'Polly',
    'Ziggy',
    'Biscuit',
    'Bubbles',
    'Button',
    'Cookie',
    'Dotty',
    'Ellie',
    'Felix',
    'Gus',
    'Hugo',
    'Iris',
    'Jasper',
    'Kiki',
    'Lola',
    'Mango',
    'Ned',
    'Otto',
    'Patch',
    'Poppy',
    'Quinn',
    'Rufus',
    'Sky',
    'Taffy',
    'Uma',
    'Vera',
    'Willow',
    'Yoyo',
    'Ace',
    'Bean',
    'Chip',
    'Dash',
    'Echo',
    'Fizz',
    'Gem',
    'Hops',
    'Inky',
    'Jelly',
    'Kip',
    'Lemon',
    'Marble',
    'Nutmeg',
    'Olive',
    'Pudding',
    'Rolo',
    'Sprout',
    'Toffee',
    'Whiskers',
    'Zara',
    'Mabel',
    'Arlo',
  ],
  heldOut: ['Noodle', 'Waffle', 'Bruno', 'Hazel', 'Pickle', 'Clover', 'Maple', 'Pebble', 'Otis', 'Nora', 'Tilly', 'Gizmo'],
} as const;

export const THINGS = {
  train: [
    'ball',
    'kite',
    'box',
    'hat',
    'car',
    'boat',
    'cake',
    'toy',
    'drum',
    'book',
    'flower',
    'apple',
    'bike',
    'doll',
    'shell',
    'star',
    'cookie',
    'balloon',
    'truck',
    'bell',
    'blanket',
    'cup',
    'red ball',
    'big box',
    'blue hat',
    'train',
    'bone',
    'stick',
    'leaf',
    'rock',
    'bucket',
    'crown',
    'flag',
    'tent',
    'whistle',
    'bag',
    'ribbon',
    'basket',
    'rope',
    'bowl',
    'map',
    'lamp',
    'clock',
    'key',
    'carrot',
    'banana',
    'pie',
    'jar',
    'bear toy',
  ],
  heldOut: ['sock', 'crayon', 'pillow', 'spoon', 'teapot', 'ladder', 'scarf', 'wagon'],
} as const;

const FIRST_SYLLABLES = [
  'Ba',
  'Bo',
  'Da',
  'Di',
  'Fa',
  'Fo',
  'Ga',
  'Ko',
  'La',
  'Li',
  'Lo',
  'Ma',
  'Mi',
  'Mo',
  'Na',
  'Ni',
  'Pa',
  'Po',
  'Ra',
  'Ri',
  'Sa',
  'So',
  'Ta',
  'To',
  'Wi',
  'Zu',
];
const LATER_SYLLABLES = ['ba', 'bi', 'do', 'ka', 'ki', 'la', 'li', 'lo', 'mi', 'mo', 'na', 'ni', 'po', 'ra', 'ri', 'ro', 'sa', 'ti', 'to', 'zi'];
const ENDINGS = ['', '', 'n', 'x', 'l', 'p', 'b'];

/**
 * The copy task's spelling: every onset letter and the usual English name endings, so the
 * fine-tune sees every piece of the tokenizer's alphabet copied from a hint into a story (a copy
 * skill learned on a few syllables stays with those syllables).
 */
const ONSETS = [
  'B',
  'C',
  'D',
  'F',
  'G',
  'H',
  'J',
  'K',
  'L',
  'M',
  'N',
  'P',
  'R',
  'S',
  'T',
  'V',
  'W',
  'Y',
  'Z',
  'Br',
  'Ch',
  'Cl',
  'Fl',
  'Gr',
  'Pr',
  'Sh',
  'Sn',
  'St',
  'Tr',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'u', 'oo', 'ee', 'ai', 'ou'];
const MIDDLES = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'bb', 'dd', 'ff', 'll', 'pp', 'tt', 'ck', 'nd', 'st'];
const NAME_ENDINGS = ['', '', '', 'n', 'x', 'l', 'p', 'b', 'y', 'le', 'el', 'er', 'ie', 's', 't', 'm', 'ck', 'zz', 'o', 'a'];

/** How made-up names are spelled: from a few syllables (the default build), or from the whole alphabet (the copy task). */
export type NameSpelling = 'syllables' | 'alphabet';

function spell(rand: () => number, spelling: NameSpelling): string {
  if (spelling === 'syllables') return pickFrom(FIRST_SYLLABLES, rand) + pickFrom(LATER_SYLLABLES, rand) + pickFrom(ENDINGS, rand);
  const syllables = rand() < 0.5 ? 1 : 2;
  let name = pickFrom(ONSETS, rand) + pickFrom(VOWELS, rand);
  for (let i = 1; i < syllables; i++) name += pickFrom(MIDDLES, rand) + pickFrom(VOWELS, rand);
  return name + pickFrom(NAME_ENDINGS, rand);
}

/** Whether a training example's name was made up (inventedName), not drawn from the name pool. */
export function isInventedName(name: string): boolean {
  return !(NAMES.train as readonly string[]).includes(name);
}

/**
 * A made-up pet name ("Mozin", "Tabix"; "Brelle", "Zoock" when spelled from the alphabet), never
 * one of the held-out names. Names the model has seen only once or twice cannot be memorised,
 * only copied from the instruction: fine-tuning on many of them is what turns writing the
 * asked-for name into a skill that reaches names it never saw.
 */
export function inventedName(rand: () => number, spelling: NameSpelling = 'syllables'): string {
  for (;;) {
    const name = spell(rand, spelling);
    if (!(NAMES.heldOut as readonly string[]).includes(name)) return name;
  }
}
