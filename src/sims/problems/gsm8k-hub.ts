import { readBodyText } from '../../models/read-body';
import { PROBLEM_LIMITS, type Problem } from './problem';
import { GSM8K_TEST_ROWS, referenceRows, type ProblemOrder } from './reference-order';

/** The datasets-server serves at most this many rows per request. */
const PAGE = 100;
/** The most one page of the datasets server may be: a page of 100 rows is tens of kilobytes. */
const MAX_PAGE_BYTES = 16_000_000;
const ROWS_URL = 'https://datasets-server.huggingface.co/rows';

export class DatasetDownloadError extends Error {
  override name = 'DatasetDownloadError';
}

export interface HubOptions {
  split?: 'test' | 'train';
  /**
   * 'dataset' (default): the split's first `count` rows. 'reference': the first `count` of the
   * reference evaluation's order of the test split (reference-order.ts).
   */
  order?: ProblemOrder;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** The URL of one page of openai/gsm8k rows from the Hugging Face datasets-server. */
export function gsm8kRowsUrl(split: string, offset: number, length: number): string {
  return `${ROWS_URL}?dataset=openai%2Fgsm8k&config=main&split=${split}&offset=${offset}&length=${length}`;
}

/**
 * The first `count` GSM8K problems of a split, in dataset order, or of the test split in the
 * reference evaluation's order (whose first 36 the paper's personalization score is taken on).
 */
export async function fetchGsm8kFromHub(count: number, options: HubOptions = {}): Promise<Problem[]> {
  const split = options.split ?? 'test';
  const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  if (!Number.isInteger(count) || count < 1 || count > PROBLEM_LIMITS.problems) {
    throw new RangeError(`Ask for between 1 and ${PROBLEM_LIMITS.problems} GSM8K problems, not ${count}.`);
  }
  if (options.order === 'reference') {
    if (split !== 'test') throw new RangeError(`The reference order is an order of the test split; ask for split "test", or for dataset order of "${split}".`);
    return fetchRows(fetchFn, referenceRows(Math.min(count, GSM8K_TEST_ROWS)), options.signal);
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

/**
 * Test-split rows in the given order. Rows are fetched in runs of nearby rows (one request per
 * page of the datasets server that holds any of them) rather than one request per row.
 */
async function fetchRows(fetchFn: typeof fetch, rows: readonly number[], signal?: AbortSignal): Promise<Problem[]> {
  const byPage = new Map<number, number[]>();
  for (const r of rows) byPage.set(Math.floor(r / PAGE), [...(byPage.get(Math.floor(r / PAGE)) ?? []), r]);
  const found = new Map<number, Problem>();
  for (const inPage of byPage.values()) {
    const first = Math.min(...inPage);
    const got = await fetchPage(fetchFn, gsm8kRowsUrl('test', first, Math.max(...inPage) - first + 1), signal);
    got.forEach((row, i) => {
      const index = row.row_idx ?? first + i;
      if (inPage.includes(index)) found.set(index, toProblem(row, 'test', index));
    });
  }
  return rows.map((r) => {
    const problem = found.get(r);
    if (!problem) {
      throw new DatasetDownloadError(
        `The Hugging Face datasets server did not return GSM8K test row ${r}. Try again later, or load GSM8K from a local .jsonl file instead.`,
      );
    }
    return problem;
  });
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
      `Could not reach the Hugging Face datasets server (${(error as Error).message}). ` + 'Check the network, or load GSM8K from a local .jsonl file instead.',
    );
  }
  if (!response.ok) {
    throw new DatasetDownloadError(
      `The Hugging Face datasets server answered HTTP ${response.status} for ${url}. ` + 'Try again later, or load GSM8K from a local .jsonl file instead.',
    );
  }
  const body = (await readBodyText(response, { maxBytes: MAX_PAGE_BYTES })
    .then((text) => JSON.parse(text))
    .catch(() => null)) as { rows?: unknown } | null;
  if (!body || !Array.isArray(body.rows)) {
    throw new DatasetDownloadError('The Hugging Face datasets server sent an answer without "rows". Load GSM8K from a local .jsonl file instead.');
  }
  return body.rows as Row[];
}

function toProblem(row: Row, split: string, index: number): Problem {
  const { question, answer } = row.row ?? {};
  if (typeof question !== 'string' || typeof answer !== 'string') {
    throw new DatasetDownloadError(
      `GSM8K row ${index} from the datasets server has no string "question" and "answer". ` + 'Load GSM8K from a local .jsonl file instead.',
    );
  }
  return { id: `gsm8k/${split}#${row.row_idx ?? index}`, question, answer };
}
