/**
 * The pets, names and favourite things the demo model's training stories are relabeled with.
 * Each pool has a held-out part that training never sees, so tests can ask for a name or thing
 * the model has only ever met in a hint.
 */
export const SUBJECTS = [
  'dog', 'cat', 'frog', 'bunny', 'bird', 'bear', 'duck', 'fish', 'mouse', 'puppy', 'kitten', 'pig',
  'horse', 'lion', 'owl', 'fox', 'little cat', 'little dog', 'cow', 'sheep', 'monkey', 'turtle',
] as const;

export const NAMES = {
  train: [
    'Max', 'Spot', 'Lily', 'Tim', 'Sam', 'Ben', 'Sue', 'Tom', 'Mia', 'Buddy', 'Daisy', 'Lucy', 'Sara', 'Anna',
    'Jack', 'Bob', 'Fluffy', 'Coco', 'Bella', 'Rex', 'Rosie', 'Leo', 'Milo', 'Kitty', 'Lulu', 'Pip', 'Ruby',
    'Toby', 'Zoe', 'Benny', 'Molly', 'Oscar', 'Ollie', 'Rocky', 'Sunny', 'Teddy', 'Goldie', 'Peanut', 'Ginger',
    'Pepper', 'Muffin', 'Honey', 'Bingo', 'Duke', 'Luna', 'Jojo', 'Fred', 'Nina', 'Polly', 'Ziggy', 'Biscuit',
    'Bubbles', 'Button', 'Cookie', 'Dotty', 'Ellie', 'Felix', 'Gus', 'Hugo', 'Iris', 'Jasper', 'Kiki',
    'Lola', 'Mango', 'Ned', 'Otto', 'Patch', 'Poppy', 'Quinn', 'Rufus', 'Sky', 'Taffy', 'Uma', 'Vera', 'Willow',
    'Yoyo', 'Ace', 'Bean', 'Chip', 'Dash', 'Echo', 'Fizz', 'Gem', 'Hops', 'Inky', 'Jelly', 'Kip', 'Lemon',
    'Marble', 'Nutmeg', 'Olive', 'Pudding', 'Rolo', 'Sprout', 'Toffee', 'Whiskers', 'Zara', 'Mabel', 'Arlo',
  ],
  heldOut: ['Noodle', 'Waffle', 'Bruno', 'Hazel', 'Pickle', 'Clover'],
} as const;

export const THINGS = {
  train: [
    'ball', 'kite', 'box', 'hat', 'car', 'boat', 'cake', 'toy', 'drum', 'book', 'flower', 'apple', 'bike', 'doll',
    'shell', 'star', 'cookie', 'balloon', 'truck', 'bell', 'blanket', 'cup', 'red ball', 'big box', 'blue hat',
    'train', 'bone', 'stick', 'leaf', 'rock', 'bucket', 'crown', 'flag', 'tent', 'whistle', 'bag',
    'ribbon', 'basket', 'rope', 'bowl', 'map', 'lamp', 'clock', 'key', 'carrot', 'banana', 'pie', 'jar', 'bear toy',
  ],
  heldOut: ['sock', 'crayon', 'pillow', 'spoon'],
} as const;
