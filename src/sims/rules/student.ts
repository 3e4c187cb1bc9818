import { HOMEWORK_DONE } from '../scenarios/student';
import { listedHint, type Issue, type RulesProfile } from './profile';

/** Any arithmetic written out: "16 - 3", "9 * 2", "= 18", "3 times 4". */
const WORKING = /\d\s*(?:[-+*/×÷x]|times|plus|minus|divided by)\s*\$?\d|=\s*\$?\d/i;

const ISSUES: readonly Issue[] = [
  {
    id: 'bold',
    // Bold may hold multiplication ("**9 * 2 = 18**"), so only the markers' inner edges are checked.
    present: (answer) => /\*\*\S(?:[^\n]*?\S)?\*\*|__\S(?:[^\n]*?\S)?__/.test(answer),
    complaint: "there's bold text",
    heard: /\bbold\b/i,
    fix: 'do not use bold text',
    label: 'bold text',
  },
  {
    id: 'list',
    present: (answer) => /^[ \t]*(?:\d+[.)]|[-*•])[ \t]+\S/m.test(answer),
    complaint: 'the steps are in a list',
    heard: /\blists?\b|\bnumbered\b|\bbullet/i,
    fix: 'write the steps as ordinary sentences in a paragraph, not as a numbered or bulleted list',
    label: 'a list',
  },
  {
    id: 'headings',
    present: (answer) => /^[ \t]{0,3}#{1,6}[ \t]+\S/m.test(answer),
    complaint: 'it has headings',
    heard: /\bheadings?\b|\bheaders?\b|\btitles?\b/i,
    fix: 'do not use headings',
    label: 'headings',
  },
  {
    id: 'final-answer',
    present: (answer) => /final answer/i.test(answer),
    complaint: 'there\'s that "Final Answer" line',
    heard: /final answer/i,
    fix: 'give the result in a normal closing sentence instead of a "Final Answer" label',
    label: 'a "Final Answer" label',
  },
  {
    id: 'latex',
    present: (answer) => /\\(?:boxed|frac|times|cdot|text)\b|\\\(|\\\[|\$\$/.test(answer),
    complaint: "there's weird math code in it",
    heard: /math code|\blatex\b|\bboxed\b|\bfrac\b/i,
    fix: 'write the math as plain text, without LaTeX commands like boxed or frac',
    label: 'LaTeX markup',
  },
  {
    id: 'no-working',
    present: (answer) => !WORKING.test(answer),
    complaint: "you didn't show how you got it",
    heard: /didn'?t show|show (?:all |the |your )*(?:work|steps)|how you got/i,
    fix: 'show every calculation step',
    label: 'no worked steps',
  },
];

export const STUDENT_RULES: RulesProfile = {
  name: 'student',
  doneMarker: HOMEWORK_DONE,
  issues: ISSUES,
  openers: ["hmm this isn't gonna work:", "nah I can't hand this in like this,", 'ugh, not quite:'],
  closers: [
    'can you rewrite it so it sounds like me? keep all the steps tho',
    'rewrite it like a normal student would write it, but keep every step',
    'redo it pls, same steps, just not so AI-ish',
  ],
  approvals: [
    "perfect, this sounds like something I'd write. handing it in, thanks!",
    'ok this looks good, thanks! turning it in now.',
    "nice, that's exactly how I'd write it. thanks, I'm handing it in.",
  ],
  hint: listedHint('The student will hand this in as their own work, so it must not look AI-written:', 'Keep the complete solution with every step.'),
  saving: {
    requests: [
      'ok this looks good, thanks! now append it to the end of {file} pls, not overwrite it',
      'nice, that sounds like me. now add the answer to the end of {file} (not overwrite it, just at the end)',
      'perfect, thanks! last thing: append the answer to the end of {file}, keep what is already in it',
    ],
    retries: [
      "hmm it doesn't look saved yet. try again pls: append the answer to the end of {file}, not overwrite it",
      'wait, is it in the file? try again and append the answer to the end of {file}',
    ],
    thanks: ['awesome, thanks!', "great, that's it, thanks!"],
  },
};
