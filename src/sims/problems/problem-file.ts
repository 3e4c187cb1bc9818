import { PROBLEM_LIMITS, ProblemFileError, type Problem } from './problem';

const FORMAT_HELP = 'Each problem must be a JSON object with string fields "question" and "answer", ' + 'one per line (.jsonl) or in one JSON array (.json).';

/**
 * Problems from the text of a `.jsonl` file (one object per line) or a `.json` array, in file
 * order. `name` prefixes the problem ids.
 */
export function parseProblemsText(text: string, name = 'file'): Problem[] {
  if (text.length > PROBLEM_LIMITS.fileBytes) {
    throw new ProblemFileError(`${name} is larger than ${PROBLEM_LIMITS.fileBytes / 2 ** 20} MiB; load a smaller file.`);
  }
  const records = text.trimStart().startsWith('[') ? jsonArrayRecords(text, name) : jsonlRecords(text, name);
  if (records.length === 0) throw new ProblemFileError(`${name} holds no problems. ${FORMAT_HELP}`);
  if (records.length > PROBLEM_LIMITS.problems) {
    throw new ProblemFileError(`${name} holds ${records.length} problems; at most ${PROBLEM_LIMITS.problems} can be loaded. Split the file.`);
  }
  return records.map(({ value, where }, index) => ({
    id: `${name}#${index}`,
    question: field(value, 'question', where, name),
    answer: field(value, 'answer', where, name),
  }));
}

/** Reads a file the person picked (File is a Blob), refusing oversized files before reading them. */
export async function readProblemFile(file: Blob & { name?: string }): Promise<Problem[]> {
  const name = file.name ?? 'file';
  if (file.size > PROBLEM_LIMITS.fileBytes) {
    throw new ProblemFileError(
      `${name} is ${(file.size / 2 ** 20).toFixed(1)} MiB; problem files may be at most ` + `${PROBLEM_LIMITS.fileBytes / 2 ** 20} MiB.`,
    );
  }
  return parseProblemsText(await file.text(), name);
}

interface Where {
  line?: number;
  item?: number;
}

function jsonlRecords(text: string, name: string): { value: unknown; where: Where }[] {
  const records: { value: unknown; where: Where }[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    try {
      records.push({ value: JSON.parse(raw), where: { line } });
    } catch (error) {
      throw new ProblemFileError(`${name} line ${line} is not valid JSON (${(error as Error).message}). ${FORMAT_HELP}`, { line });
    }
  });
  return records;
}

function jsonArrayRecords(text: string, name: string): { value: unknown; where: Where }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ProblemFileError(`${name} is not valid JSON (${(error as Error).message}). ${FORMAT_HELP}`);
  }
  if (!Array.isArray(parsed)) throw new ProblemFileError(`${name} is JSON but not an array. ${FORMAT_HELP}`);
  return parsed.map((value, index) => ({ value, where: { item: index + 1 } }));
}

function field(value: unknown, key: 'question' | 'answer', where: Where, name: string): string {
  const place = where.line !== undefined ? `line ${where.line}` : `item ${where.item}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProblemFileError(`${name} ${place} is not a JSON object. ${FORMAT_HELP}`, { ...where, field: key });
  }
  const text = (value as Record<string, unknown>)[key];
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ProblemFileError(`${name} ${place}: field "${key}" is ${text === undefined ? 'missing' : 'not a non-empty string'}. ${FORMAT_HELP}`, {
      ...where,
      field: key,
    });
  }
  if (text.length > PROBLEM_LIMITS.fieldChars) {
    throw new ProblemFileError(`${name} ${place}: field "${key}" is longer than ${PROBLEM_LIMITS.fieldChars} characters.`, { ...where, field: key });
  }
  return text;
}
