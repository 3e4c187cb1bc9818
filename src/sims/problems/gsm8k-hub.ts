import { PROBLEM_LIMITS, type Problem } from './problem';

/** The datasets-server serves at most this many rows per request. */
const PAGE = 100;
const ROWS_URL = 'https://datasets-server.huggingface.co/rows';

export class DatasetDownloadError extends Error {
  override name = 'DatasetDownloadError';
}

export interface HubOptions {
  split?: 'test' | 'train';
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** The URL of one page of openai/gsm8k rows from the Hugging Face datasets-server. */
export function gsm8kRowsUrl(split: string, offset: number, length: number): string {
  return `${ROWS_URL}?dataset=openai%2Fgsm8k&config=main&split=${split}&offset=${offset}&length=${length}`;
}

/** The first `count` GSM8K problems of a split, in dataset order (the paper scores the first 36 of test). */
export async function fetchGsm8kFromHub(count: number, options: HubOptions = {}): Promise<Problem[]> {
  const split = options.split ?? 'test';
  const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  if (!Number.isInteger(count) || count < 1 || count > PROBLEM_LIMITS.problems) {
    throw new RangeError(`Ask for between 1 and ${PROBLEM_LIMITS.problems} GSM8K problems, not ${count}.`);
  }
  const problems: Problem[] = [];
  while (problems.length < count) {
    const offset = problems.length;
    const rows = await fetchPage(fetchFn, gsm8kRowsUrl(split, offset, Math.min(PAGE, count - offset)), options.signal);
    if (rows.length === 0) break;
    rows.forEach((row, index) => problems.push(toProblem(row, split, offset + index)));
  }
  return problems;
}

interface Row {
  row_idx?: number;
  row?: { question?: unknown; answer?: unknown };
}

async function fetchPage(fetchFn: typeof fetch, url: string, signal?: AbortSignal): Promise<Row[]> {
  let response: Response;
  try {
    response = await fetchFn(url, { signal });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new DatasetDownloadError(
      `Could not reach the Hugging Face datasets server (${(error as Error).message}). ` +
        'Check the network, or load GSM8K from a local .jsonl file instead.',
    );
  }
  if (!response.ok) {
    throw new DatasetDownloadError(
      `The Hugging Face datasets server answered HTTP ${response.status} for ${url}. ` +
        'Try again later, or load GSM8K from a local .jsonl file instead.',
    );
  }
  const body = (await response.json().catch(() => null)) as { rows?: unknown } | null;
  if (!body || !Array.isArray(body.rows)) {
    throw new DatasetDownloadError(
      'The Hugging Face datasets server sent an answer without "rows". Load GSM8K from a local .jsonl file instead.',
    );
  }
  return body.rows as Row[];
}

function toProblem(row: Row, split: string, index: number): Problem {
  const { question, answer } = row.row ?? {};
  if (typeof question !== 'string' || typeof answer !== 'string') {
    throw new DatasetDownloadError(
      `GSM8K row ${index} from the datasets server has no string "question" and "answer". ` +
        'Load GSM8K from a local .jsonl file instead.',
    );
  }
  return { id: `gsm8k/${split}#${row.row_idx ?? index}`, question, answer };
}
