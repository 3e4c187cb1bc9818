import type { Scenario } from './scenario';
import { studentWorkWithSlip } from './student-work';

export const GRADING_DONE = 'GRADING_DONE';

/** The paper's teacher simulator: wants detailed, patient, encouraging grading comments. */
const PERSONA = `You are role-playing a teacher who is grading a student's homework with the help of an AI assistant. You talk casually and keep your messages short.

You never grade, rewrite or write any comments yourself. You only tell the AI what to do.

Your goal: get the AI to write grading comments for the student that are detailed, patient and encouraging. Good comments say what the student did well, point out exactly where the student went wrong, and explain the right approach and the correct answer, in a warm tone. If the comments are too short, skip any of these parts, or sound harsh or impatient, tell the AI to rewrite them and say briefly what is missing, without fixing it yourself. If the comments are already detailed and kind, do not ask for a rewrite.

How the conversation goes:
1. Read the AI's latest comments. If they are not good enough, ask for a rewrite, and ask for nothing else in that message.
2. Once the comments are what you want, tell the AI they are good and that you will give them to the student, and end that message with exactly ${GRADING_DONE}.

Never write ${GRADING_DONE} while the comments still need work. Reply with your next message to the AI only.`;

export function teacherScenario(): Scenario {
  return {
    config: { id: 'teacher' },
    id: 'teacher',
    title: 'Teacher',
    summary: "A teacher wants detailed, patient, encouraging comments on a student's GSM8K solution.",
    persona: PERSONA,
    firstMessage: (problem) => {
      // Without a policy-written attempt (tests, previews) a scripted one with a slip stands in.
      const work = studentWorkWithSlip(problem);
      return (
        "I'm grading a student's homework. Here is the question, the correct answer and what the student wrote.\n\n" +
        `Question: ${problem.question}\n\nCorrect answer: ${work.correctAnswer}\n\nStudent's work:\n${problem.studentWork ?? work.text}\n\n` +
        'Please write the grading comments directly, as if you are writing them on the paper: no intro, no summary.'
      );
    },
    doneMarker: GRADING_DONE,
    maxTurns: 8,
    baseModelReplies: 'latest',
    preference:
      'The user is a teacher who wants grading comments that are detailed, patient and encouraging: they say what ' +
      'the student did well, point out exactly where the student went wrong, explain the right approach and the ' +
      'correct answer, and never sound harsh.',
    problemSource: 'gsm8k',
  };
}
