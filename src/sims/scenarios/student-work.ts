import { gsm8kSteps, parseGsm8kAnswer } from '../problems/gsm8k-answer';
import type { Problem } from '../problems/problem';
import { hashParts } from '../seeded';

/** How far off the student's final number is; chosen per problem so that slips vary. */
const SLIPS = [1, -1, 2, 10, -2, 3] as const;

export interface StudentWork {
  text: string;
  correctAnswer: number;
  studentAnswer: number;
}

/**
 * A student's attempt at a GSM8K problem for the teacher scenario: the reference steps, with an
 * arithmetic slip in the last one, so that every submission has something to praise and one
 * mistake to point out.
 */
export function studentWorkWithSlip(problem: Problem): StudentWork {
  const correctAnswer = parseGsm8kAnswer(problem.answer);
  const slip = SLIPS[hashParts(problem.id, problem.question) % SLIPS.length];
  // Slip away from zero when the slip would cross it: a student does not flip the answer's sign.
  const nearby = correctAnswer + slip;
  const sameSide = correctAnswer >= 0 ? nearby > 0 : nearby < 0;
  const studentAnswer = sameSide ? nearby : correctAnswer - slip;
  const steps = gsm8kSteps(problem.answer);
  const last = steps.length - 1;
  if (last >= 0) steps[last] = replaceLastNumber(steps[last], correctAnswer, studentAnswer);
  steps.push(`So my answer is ${studentAnswer}.`);
  return { text: steps.join('\n'), correctAnswer, studentAnswer };
}

function replaceLastNumber(line: string, correct: number, wrong: number): string {
  // A minus sign counts only where it cannot be subtraction ("16-3" holds 16 and 3, not -3).
  const numbers = [...line.matchAll(/(?<![\d)])-?\d[\d,]*(?:\.\d+)?/g)];
  const target = numbers.filter((m) => Number(m[0].replace(/,/g, '')) === correct).at(-1) ?? numbers.at(-1);
  if (!target || target.index === undefined) return line;
  return line.slice(0, target.index) + String(wrong) + line.slice(target.index + target[0].length);
}
