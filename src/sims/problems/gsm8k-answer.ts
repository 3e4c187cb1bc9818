/** A GSM8K solution without its final `#### <number>` line. */
export class Gsm8kAnswerError extends Error {
  override name = 'Gsm8kAnswerError';
}

const FINAL = /####\s*([-+]?[\d,]*\.?\d+)\s*$/;

/** The number after `####` at the end of a GSM8K solution, thousands separators removed. */
export function parseGsm8kAnswer(answer: string): number {
  const match = FINAL.exec(answer.trim());
  const value = match ? Number(match[1].replace(/,/g, '')) : NaN;
  if (!Number.isFinite(value)) {
    throw new Gsm8kAnswerError(`This solution does not end in "#### <number>": "${answer.slice(-60)}". ` + 'GSM8K answers end with a line like "#### 18".');
  }
  return value;
}

/** The worked steps of a GSM8K solution: the `####` line dropped, `<<a*b=c>>` annotations removed. */
export function gsm8kSteps(answer: string): string[] {
  return answer
    .split('\n')
    .filter((line) => !line.trim().startsWith('####'))
    .map((line) => line.replace(/<<[^>]*>>/g, '').trim())
    .filter(Boolean);
}
