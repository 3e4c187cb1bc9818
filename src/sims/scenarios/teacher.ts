import { parseGsm8kAnswer } from '../problems/gsm8k-answer';
import { homeworkPath } from '../workspace/homework';
import { homeworkMode } from './homework-mode';
import type { HomeworkPhase, HomeworkScenarioConfig, Scenario } from './scenario';
import { STUDENT_PHASE } from './student';
import { studentWorkWithSlip } from './student-work';

export const GRADING_DONE = 'GRADING_DONE';

/**
 * Who the teacher is and what they want, in either variant: the paper's teacher, who wants
 * detailed, patient, encouraging comments that explain any mistakes ("explain any mistakes
 * patiently, and show the correct approach if needed", as the reference's teacher puts it): a
 * correct solution has none to point out.
 */
const WHO = `You are role-playing a teacher who is grading a student's homework with the help of an AI assistant. You talk casually and keep your messages short.

You never grade, rewrite or write any comments yourself. You only tell the AI what to do.

Your goal: get the AI to write grading comments for the student that are detailed, patient and encouraging. Good comments say what the student did well, explain any mistakes patiently, and show the right approach and the correct answer where that is needed, in a warm tone. If the comments are too short, say nothing about what went well, or sound harsh or impatient, tell the AI to rewrite them with more detail and a warmer tone, and say briefly what is missing, without fixing it yourself. If the comments are already detailed and kind, do not ask for a rewrite.`;

const CHAT_PERSONA = `${WHO}

How the conversation goes:
1. Read the AI's latest comments. If they are not good enough, ask for a rewrite, and ask for nothing else in that message.
2. Once the comments are what you want, tell the AI they are good and that you will give them to the student, and end that message with exactly ${GRADING_DONE}.

Never write ${GRADING_DONE} while the comments still need work. Reply with your next message to the AI only.`;

/**
 * The reference's teacher in its own words (openclaw-test/teacher_chat.py, TEACHER_SYSTEM_PROMPT,
 * MIT-licensed): the submission is a file the AI reads, and the comments go back into it.
 */
const WORKSPACE_PERSONA = `You are role-playing as a teacher who is grading student homework. You talk casually. You want the AI to write comments that is detailed, patient, and encouraging.

You CANNOT grade, rewrite, rephrase, or produce any comments yourself. You can ONLY tell the AI what to do. Never do the grading yourself.

Your goal: get the AI to grade the student's homework and write comments. The comments must be detailed and friendly — it should point out what the student did well, explain any mistakes patiently, and show the correct approach if needed. If the AI's comments is too short or not friendly enough, tell it to rewrite with more detail and a warmer tone. Just tell it to fix it — don't fix it yourself. If the comments is already detailed and friendly, no need to rewrite.

Steps:
1. Look at what the AI gives you. If the comments is not detailed or friendly enough, tell it to redo it. If it's good, no need to redo. Do NOT mention writing to the file in the same message. Only ask for a rewrite.
2. After the AI shows you the satisfactory version, THEN in a separate message ask it to append the comments to the end of the homework file (not overwrite it). Do NOT combine a rewrite request and a write request.
3. After the AI says it saved the file, say exactly: ${GRADING_DONE}

Never say ${GRADING_DONE} until the AI confirms it wrote the file.
Never write or grade anything yourself. Just give simple instructions.`;

const DIRECT = 'write the grading comments directly, as if you are writing them on the paper: no intro, no summary.';

/** The teacher phase of a homework in the workspace: read the student's file, grade it against the answer, then (asked separately) append the comments. */
export const TEACHER_PHASE: HomeworkPhase = {
  id: 'teacher',
  persona: WORKSPACE_PERSONA,
  // The reference's FIRST_MESSAGE_TEMPLATE, with the lab's path.
  firstMessage: (problem, path) =>
    `I'm grading a student's homework. The submission is in the file ${path} in your workspace. Please read the file first.\n\n` +
    `Here is the original question and the correct answer for reference:\n\nQuestion: ${problem.question}\n\nCorrect answer: ${parseGsm8kAnswer(problem.answer)}\n\n` +
    "Please read the student's submission from the file, compare it with the correct answer, and write the grading comments directly. " +
    'No intro, no summary, no "here are the comments" — just the comments themselves, as if you are writing them on the student\'s paper. ' +
    "Show me the comments first — don't write to the file until I tell you to.",
  doneMarker: GRADING_DONE,
  maxTurns: 8,
};

export function teacherScenario(config: Omit<HomeworkScenarioConfig, 'id'> = {}): Scenario {
  const homework = homeworkMode(config.homework);
  const workspace = homework === 'workspace';
  return {
    config: workspace ? { id: 'teacher', homework } : { id: 'teacher' },
    id: 'teacher',
    title: 'Teacher',
    summary: workspace
      ? "A teacher wants detailed, patient, encouraging comments on the student's GSM8K solution that the student phase left in a workspace file, appended to that file."
      : "A teacher wants detailed, patient, encouraging comments on a student's GSM8K solution.",
    persona: workspace ? WORKSPACE_PERSONA : CHAT_PERSONA,
    firstMessage: workspace
      ? (problem) => TEACHER_PHASE.firstMessage(problem, homeworkPath(0))
      : (problem) => {
          // Without a policy-written attempt (tests, previews) a scripted one with a slip stands in.
          const work = studentWorkWithSlip(problem);
          return (
            "I'm grading a student's homework. Here is the question, the correct answer and what the student wrote.\n\n" +
            `Question: ${problem.question}\n\nCorrect answer: ${work.correctAnswer}\n\nStudent's work:\n${problem.studentWork ?? work.text}\n\n` +
            `Please ${DIRECT}`
          );
        },
    doneMarker: GRADING_DONE,
    maxTurns: 8,
    baseModelReplies: 'latest',
    preference:
      'The user is a teacher who wants grading comments that are detailed, patient and encouraging: they say what ' +
      'the student did well, explain any mistakes patiently (a correct solution has none to point out), show the ' +
      'right approach and the correct answer where the student needs them, and never sound harsh.',
    problemSource: 'gsm8k',
    workspace: workspace ? { phases: [STUDENT_PHASE, TEACHER_PHASE] } : null,
  };
}
