import { GRADING_DONE } from '../scenarios/teacher';
import { listedHint, wordCount, type Issue, type RulesProfile } from './profile';

const PRAISE = /\b(?:good|great|nice|nicely|well done|excellent|correctly|strong|impressive|solid|right track|you did|i like|good job)\b/i;
const MISTAKE = /\b(?:mistake|error|wrong|incorrect|slip|miscalculat\w*|not quite|off by|should (?:be|have been))\b/i;
const APPROACH = /\b(?:instead|correct (?:way|approach|method)|right (?:way|approach)|next time|should)\b/i;
const HARSH = /\b(?:careless|lazy|stupid|obviously|sloppy|terrible|awful|silly|clearly wrong|no excuse|should have known)\b/i;
const MIN_WORDS = 60;

/** The correct answer the teacher gave in the first message, when it is there to check against. */
function correctAnswerIn(task: string): string | null {
  return /Correct answer:\s*\$?([-\d,.]*\d)/i.exec(task)?.[1].replace(/,/g, '') ?? null;
}

const NUMBER = /\d[\d,]*(?:\.\d+)?/g;

function mentionsNumber(text: string, value: string): boolean {
  return (text.match(NUMBER) ?? []).some((n) => n.replace(/,/g, '') === value);
}

/**
 * Whether the student's work the teacher was shown ends on the correct answer (its last number):
 * true, false, or null when the teacher was not shown the work (in the workspace it is in a file
 * the teacher never reads, as in the reference) or there is no correct answer to compare with.
 * A shown solution without a number is wrong.
 */
export function studentIsRight(task: string): boolean | null {
  const correct = correctAnswerIn(task);
  const at = task.lastIndexOf("Student's work:\n");
  if (correct === null || at < 0) return null;
  const work = task.slice(at).split(/\n\n(?=Please\b)/)[0];
  const last = work.match(NUMBER)?.at(-1)?.replace(/,/g, '');
  return last === undefined ? false : Number(last) === Number(correct);
}

const ISSUES: readonly Issue[] = [
  {
    id: 'no-praise',
    present: (answer) => !PRAISE.test(answer),
    complaint: "there's nothing about what the student did well",
    heard: /did well|got right|\bpraise|something nice/i,
    fix: 'start by praising what the student did well, naming the steps they got right',
    label: 'no praise',
  },
  {
    // "Explain any mistakes", as the reference's teacher asks: only a wrong solution has one to point out.
    id: 'no-mistake',
    present: (answer, task) => studentIsRight(task) === false && !MISTAKE.test(answer),
    complaint: "you don't say where exactly they went wrong",
    heard: /went wrong|the mistake|the error|where .{0,20}wrong/i,
    fix: 'point to the exact step where the student went wrong and say what the mistake was',
    label: 'no pointer to the mistake',
  },
  {
    id: 'no-approach',
    // "Show the correct approach if needed": not for a solution the teacher sees is right.
    present: (answer, task) => {
      if (studentIsRight(task) === true) return false;
      const correct = correctAnswerIn(task);
      return correct === null ? !APPROACH.test(answer) : !mentionsNumber(answer, correct);
    },
    complaint: "you don't explain the right way to solve it",
    heard: /right way|right approach|correct (?:way|approach|method)|how to solve/i,
    fix: 'explain the correct approach step by step and give the correct answer',
    label: 'no correct approach',
  },
  {
    id: 'too-short',
    present: (answer) => wordCount(answer) < MIN_WORDS,
    complaint: "it's way too short, it needs more detail",
    heard: /too short|more detail|\blonger\b|\bdetailed\b/i,
    fix: 'write several sentences of detailed comments',
    label: 'too short',
  },
  {
    id: 'harsh',
    present: (answer) => HARSH.test(answer),
    complaint: 'it sounds kind of harsh, be more patient and encouraging',
    heard: /harsh|patient|encourag|gentle|kinder|warmer|\bmean\b/i,
    fix: 'use a patient, encouraging tone, without words like careless or obviously',
    label: 'harsh tone',
  },
];

export const TEACHER_RULES: RulesProfile = {
  name: 'teacher',
  doneMarker: GRADING_DONE,
  issues: ISSUES,
  openers: ['hmm, these comments need some work:', 'not quite there yet:', 'close, but'],
  closers: ['can you rewrite them?', 'please redo the comments.', 'try again please.'],
  approvals: [
    "these are great, thorough and kind. I'll give them to the student, thank you!",
    "perfect, that's exactly the feedback I wanted. thanks, I'll pass it on.",
  ],
  hint: listedHint(
    'The teacher wants detailed, patient, encouraging grading comments:',
    'Cover what went well, any mistakes and, where needed, the right approach.',
  ),
  saving: {
    requests: [
      'these are great, thanks! now append the comments to the end of {file}, not overwrite it.',
      'perfect, that is the feedback I wanted. please add the comments to the end of {file} now (not overwrite it).',
    ],
    retries: ["hmm, I don't see them saved yet. try again please: append the comments to the end of {file}, not overwrite it."],
    thanks: ['great, thank you!', "wonderful, thanks, I'll pass it on."],
  },
};
