import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../../test/data-dir';
import { BUILT_IN_PROBLEMS } from './builtin';
import { gsm8kSteps, parseGsm8kAnswer, Gsm8kAnswerError } from './gsm8k-answer';
import { fetchGsm8kFromHub, gsm8kRowsUrl, DatasetDownloadError } from './gsm8k-hub';
import { PROBLEM_LIMITS, ProblemFileError } from './problem';
import { parseProblemsText, readProblemFile } from './problem-file';
import { inReferenceOrder, REFERENCE_ORDER } from './reference-order';
import { storyOpenings } from './story-openings';

const gsm8kPath = dataPath('data/gsm8k/test.jsonl');

describe('GSM8K test split from data/gsm8k', () => {
  it('loads all 1,319 problems in file order', () => {
    const problems = parseProblemsText(readFileSync(gsm8kPath, 'utf8'), 'test.jsonl');
    expect(problems).toHaveLength(1319);
    expect(problems[0].id).toBe('test.jsonl#0');
    expect(problems[0].question).toMatch(/^Janet’s ducks lay 16 eggs per day\./);
    expect(parseGsm8kAnswer(problems[0].answer)).toBe(18);
    expect(problems[1].question).toMatch(/^A robe takes 2 bolts of blue fiber/);
  });

  it('parses every answer to a finite number, comma-grouped ones included', () => {
    const problems = parseProblemsText(readFileSync(gsm8kPath, 'utf8'), 'test.jsonl');
    const answers = problems.map((p) => parseGsm8kAnswer(p.answer));
    expect(answers.every(Number.isFinite)).toBe(true);
    const grouped = problems.findIndex((p) => p.answer.endsWith('#### 1,450,000'));
    expect(grouped).toBeGreaterThanOrEqual(0);
    expect(answers[grouped]).toBe(1_450_000);
  });

  it('reads a File-like Blob the same way as text', async () => {
    const blob = new Blob([readFileSync(gsm8kPath)]);
    const problems = await readProblemFile(Object.assign(blob, { name: 'test.jsonl' }));
    expect(problems).toHaveLength(1319);
  });
});

describe('parseGsm8kAnswer', () => {
  it('reads integers, negatives, decimals and thousands separators after ####', () => {
    expect(parseGsm8kAnswer('x\n#### 18')).toBe(18);
    expect(parseGsm8kAnswer('x\n#### -3')).toBe(-3);
    expect(parseGsm8kAnswer('x\n####  2.5 ')).toBe(2.5);
    expect(parseGsm8kAnswer('x\n#### 1,450,000')).toBe(1_450_000);
  });

  it('throws a Gsm8kAnswerError when there is no final number', () => {
    expect(() => parseGsm8kAnswer('The answer is 18.')).toThrow(Gsm8kAnswerError);
    expect(() => parseGsm8kAnswer('#### eighteen')).toThrow(/#### <number>/);
  });

  it('gsm8kSteps drops the #### line and the calculator annotations', () => {
    expect(gsm8kSteps('She has 3 * 4 = <<3*4=12>>12 apples.\n#### 12')).toEqual(['She has 3 * 4 = 12 apples.']);
  });
});

describe('malformed problem files name the line and the field', () => {
  const good = JSON.stringify({ question: 'q', answer: 'a\n#### 1' });

  it('a line that is not JSON', () => {
    const error = catchError(() => parseProblemsText(`${good}\n${good}\n{"question": "oops"`, 'bad.jsonl'));
    expect(error).toBeInstanceOf(ProblemFileError);
    expect(error.message).toContain('bad.jsonl line 3 is not valid JSON');
    expect((error as ProblemFileError).where).toEqual({ line: 3 });
  });

  it('a missing field, counting blank lines so the number matches an editor', () => {
    const error = catchError(() => parseProblemsText(`${good}\n\n{"question": "q2"}\n`, 'gap.jsonl'));
    expect(error.message).toContain('gap.jsonl line 3: field "answer" is missing');
    expect((error as ProblemFileError).where).toEqual({ line: 3, field: 'answer' });
  });

  it('a field of the wrong type', () => {
    const error = catchError(() => parseProblemsText(`{"question": 42, "answer": "a"}`, 'types.jsonl'));
    expect(error.message).toContain('line 1: field "question" is not a non-empty string');
  });

  it('a JSON array item that is not an object', () => {
    const error = catchError(() => parseProblemsText(`[${good}, "just text"]`, 'array.json'));
    expect(error.message).toContain('array.json item 2 is not a JSON object');
    expect((error as ProblemFileError).where).toMatchObject({ item: 2 });
  });

  it('JSON that is not an array, and an empty file', () => {
    expect(() => parseProblemsText('{"question":"q","answer":"a"} trailing', 'x.json')).toThrow(/line 1 is not valid JSON/);
    expect(() => parseProblemsText('\n\n', 'empty.jsonl')).toThrow(/holds no problems/);
  });

  it('a JSON array loads in order with ids from the file name', () => {
    const problems = parseProblemsText(`[${good}, ${good}]`, 'two.json');
    expect(problems.map((p) => p.id)).toEqual(['two.json#0', 'two.json#1']);
  });

  it('refuses files over the size limit before reading them', async () => {
    const huge = { size: PROBLEM_LIMITS.fileBytes + 1, name: 'huge.jsonl', text: () => Promise.reject(new Error('read')) };
    await expect(readProblemFile(huge as unknown as Blob & { name: string })).rejects.toThrow(/at most 16 MiB/);
  });

  it('refuses a field longer than the limit', () => {
    const long = JSON.stringify({ question: 'x'.repeat(PROBLEM_LIMITS.fieldChars + 1), answer: 'a' });
    expect(() => parseProblemsText(long, 'long.jsonl')).toThrow(/line 1: field "question" is longer/);
  });
});

describe('GSM8K from the Hugging Face datasets-server rows API', () => {
  it('builds the documented URL', () => {
    expect(gsm8kRowsUrl('test', 0, 36)).toBe('https://datasets-server.huggingface.co/rows?dataset=openai%2Fgsm8k&config=main&split=test&offset=0&length=36');
  });

  it('pages by 100 rows and keeps dataset order', async () => {
    const { urls, fakeFetch } = fakeHub();
    const problems = await fetchGsm8kFromHub(150, { fetch: fakeFetch });
    expect(urls).toEqual([gsm8kRowsUrl('test', 0, 100), gsm8kRowsUrl('test', 100, 50)]);
    expect(problems).toHaveLength(150);
    expect(problems[149]).toEqual({ id: 'gsm8k/test#149', question: 'q149', answer: '#### 149' });
  });

  it('takes the reference order of the test split, one request per page it touches', async () => {
    const { urls, fakeFetch } = fakeHub();
    const problems = await fetchGsm8kFromHub(36, { fetch: fakeFetch, order: 'reference' });
    expect(problems.map((p) => p.id)).toEqual(REFERENCE_ORDER.slice(0, 36).map((r) => `gsm8k/test#${r}`));
    expect(problems[0]).toEqual({ id: 'gsm8k/test#677', question: 'q677', answer: '#### 677' });
    // The 36 rows lie on 12 pages of 100; each request spans only the rows it needs there.
    expect(urls).toHaveLength(12);
    for (const u of urls) expect(Number(new URL(u).searchParams.get('length'))).toBeLessThanOrEqual(100);
    await expect(fetchGsm8kFromHub(3, { fetch: fakeFetch, order: 'reference', split: 'train' })).rejects.toThrow(/test split/);
  });
});

describe('the reference evaluation order (data/gsm8k/openclaw-order.json)', () => {
  const test = () => parseProblemsText(readFileSync(gsm8kPath, 'utf8'), 'test.jsonl');

  it('lists every test row once; its first problem is "Carol and Jennifer", and "Janet’s ducks" comes 710th', () => {
    expect(REFERENCE_ORDER).toHaveLength(1319);
    expect(new Set(REFERENCE_ORDER).size).toBe(1319);
    expect(REFERENCE_ORDER.slice(0, 4)).toEqual([677, 1046, 610, 49]);
    const ordered = inReferenceOrder(test(), 'test.jsonl');
    expect(ordered[0].question).toMatch(/^Carol and Jennifer are sisters/);
    expect(ordered[0].id).toBe('test.jsonl#677');
    expect(ordered.findIndex((p) => p.question.startsWith('Janet’s ducks'))).toBe(709);
    // The reference's 36 evaluation problems and the dataset's first 36 share none.
    const first36 = new Set(
      test()
        .slice(0, 36)
        .map((p) => p.id),
    );
    expect(ordered.slice(0, 36).filter((p) => first36.has(p.id))).toEqual([]);
  });

  it('refuses a file that is not the test split in dataset order, saying to choose dataset order', () => {
    const short = catchError(() => inReferenceOrder(test().slice(0, 100), 'mine.jsonl'));
    expect(short).toBeInstanceOf(ProblemFileError);
    expect(short.message).toMatch(/mine\.jsonl is not the GSM8K test split.*100 problems.*problems\.order to "dataset"/);
    const shuffled = catchError(() => inReferenceOrder([...test()].reverse(), 'shuffled.jsonl'));
    expect(shuffled.message).toMatch(/row 677 is not "Carol and Jennifer are sisters\.\.\."/);
  });
});

function fakeHub() {
  const urls: string[] = [];
  const fakeFetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    urls.push(String(input));
    const offset = Number(url.searchParams.get('offset'));
    const length = Number(url.searchParams.get('length'));
    const rows = Array.from({ length }, (_, i) => ({
      row_idx: offset + i,
      row: { question: `q${offset + i}`, answer: `#### ${offset + i}` },
      truncated_cells: [],
    }));
    return new Response(JSON.stringify({ rows, num_rows_total: 1319 }));
  }) as typeof fetch;
  return { urls, fakeFetch };
}

describe('GSM8K hub failures', () => {
  it('turns HTTP and network failures into a DatasetDownloadError that suggests a local file', async () => {
    const http = (async () => new Response('busy', { status: 503 })) as typeof fetch;
    await expect(fetchGsm8kFromHub(3, { fetch: http })).rejects.toThrow(/HTTP 503.*local \.jsonl/);
    const offline = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    await expect(fetchGsm8kFromHub(3, { fetch: offline })).rejects.toBeInstanceOf(DatasetDownloadError);
  });
});

describe('built-in problems', () => {
  it('are twelve problems whose calculator annotations and final answers are right', () => {
    expect(BUILT_IN_PROBLEMS).toHaveLength(12);
    for (const problem of BUILT_IN_PROBLEMS) {
      for (const [, a, op, b, result] of problem.answer.matchAll(/<<([\d.]+)([-+*/])([\d.]+)=([\d.]+)>>/g)) {
        expect(applyOp(Number(a), op, Number(b)), `${problem.id}: ${a}${op}${b}`).toBeCloseTo(Number(result), 9);
      }
      expect(Number.isInteger(parseGsm8kAnswer(problem.answer))).toBe(true);
    }
    expect(parseGsm8kAnswer(BUILT_IN_PROBLEMS[4].answer)).toBe(1065);
  });

  it('story openings name the subject with the right article', () => {
    const openings = storyOpenings('elephant').map((p) => p.question);
    expect(openings).toHaveLength(12);
    expect(openings.every((text) => text.includes('elephant'))).toBe(true);
    expect(openings).toContain('Once upon a time, an elephant lived in a small house with a big garden.');
    expect(storyOpenings('dog')[0].question).toBe('Once upon a time, there was a little dog.');
  });
});

function applyOp(a: number, op: string, b: number): number {
  if (op === '+') return a + b;
  if (op === '-') return a - b;
  if (op === '*') return a * b;
  return a / b;
}

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}
