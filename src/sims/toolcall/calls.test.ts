import { describe, expect, it } from 'vitest';
import { CALCULATOR_TOOL, runCalculator } from './calculator';
import { parseToolCalls } from './calls';
import { calculatorCall } from '../../../test/support/toolcall/testing';

const call = (body: string) => `<tool_call>${body}</tool_call>`;

describe('parseToolCalls', () => {
  it('reads a well-formed call and the text around it', () => {
    const out = `I need the total.\n${calculatorCall('4 * 18')}`;
    const parsed = parseToolCalls(out);
    expect(parsed.calls).toEqual([{ index: 0, name: 'calculator', expression: '4 * 18', raw: calculatorCall('4 * 18') }]);
    expect(parsed.errors).toEqual([]);
    expect(parsed.text).toBe('I need the total.');
    expect(parsed.blocks).toBe(1);
  });

  it('reads several calls in order, errors interleaved by index', () => {
    const out =
      `First ${calculatorCall('4 * 18')} then ${call('{"name": "calculator", "arguments": {"expression": "72 - 24"}}')} ` + `and ${call('{not json}')} done`;
    const parsed = parseToolCalls(out);
    expect(parsed.calls.map((c) => [c.index, c.expression])).toEqual([
      [0, '4 * 18'],
      [1, '72 - 24'],
    ]);
    expect(parsed.errors.map((e) => e.index)).toEqual([2]);
    expect(parsed.errors[0].message).toMatch(/^Tool call 3: "\{not json\}" is not valid JSON \(.*\)\. Write it as <tool_call>/);
    expect(parsed.text).toBe('First  then  and  done');
  });

  it('has no blocks for a final answer, and leaves stray closing tags in the text', () => {
    expect(parseToolCalls('The answer is 8.')).toEqual({ calls: [], errors: [], text: 'The answer is 8.', blocks: 0 });
    expect(parseToolCalls('oops </tool_call> 8').blocks).toBe(0);
  });

  it('accepts a block without a closing tag when its JSON is complete (stop-string trimming)', () => {
    const parsed = parseToolCalls('Let me compute.\n<tool_call>\n{"name": "calculator", "arguments": {"expression": "48 / 6"}}\n');
    expect(parsed.calls.map((c) => c.expression)).toEqual(['48 / 6']);
    expect(parsed.text).toBe('Let me compute.');
  });

  it('reports an unclosed block with incomplete JSON, ending it at the next block', () => {
    const parsed = parseToolCalls(`<tool_call>{"name": "calculator", "argum ${calculatorCall('1 + 1')}`);
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0].index).toBe(0);
    expect(parsed.errors[0].message).toMatch(/not valid JSON .* It also has no closing <\/tool_call> tag\./);
    expect(parsed.calls.map((c) => [c.index, c.expression])).toEqual([[1, '1 + 1']]);
  });

  it('accepts arguments given as a JSON string (a Qwen habit) and a number as the expression', () => {
    const asString = call(JSON.stringify({ name: 'calculator', arguments: JSON.stringify({ expression: '3 + 4' }) }));
    expect(parseToolCalls(asString).calls[0].expression).toBe('3 + 4');
    expect(parseToolCalls(call('{"name": "calculator", "arguments": {"expression": 42}}')).calls[0].expression).toBe('42');
  });

  it.each([
    ['{"name": "python", "arguments": {"code": "print(1)"}}', /There is no tool named "python"; the only tool is "calculator"/],
    ['{"arguments": {"expression": "1"}}', /The call has no "name"/],
    ['{"name": "calculator"}', /"arguments" must be an object with an "expression"/],
    ['{"name": "calculator", "arguments": "expression=1+1"}', /"arguments" is a string that is not a JSON object/],
    ['{"name": "calculator", "arguments": "[1]"}', /"arguments" must be an object/],
    ['{"name": "calculator", "arguments": {"expr": "1"}}', /takes only "expression", not "expr"/],
    ['{"name": "calculator", "arguments": {"expression": ["1"]}}', /must be a string such as "12 \* 7"/],
    ['{"name": "calculator", "arguments": {}}', /must be a string/],
    ['[1, 2]', /must hold a JSON object/],
    ['   ', /The block is empty/],
    ['```json\n{"name": "calculator", "arguments": {"expression": "1"}}\n```', /is not valid JSON/],
  ])('reports %s', (body, message) => {
    const parsed = parseToolCalls(`text ${call(body)}`);
    expect(parsed.calls).toEqual([]);
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0].message).toMatch(message);
    expect(parsed.errors[0].message).toContain('Tool call 1: ');
    expect(parsed.blocks).toBe(1);
  });

  it('quotes untrusted text short and on one line', () => {
    const body = `{"name": "${'n'.repeat(500)}\\nline", "arguments": {}}`;
    const [error] = parseToolCalls(call(body)).errors;
    expect(error.message).not.toContain('\n');
    expect(error.message.length).toBeLessThan(300);
    const [broken] = parseToolCalls(call(`{\n"name":\n${'x'.repeat(5000)}`)).errors;
    expect(broken.message).not.toContain('\n');
    expect(broken.message.length).toBeLessThan(600);
  });

  it('stays linear on many unclosed blocks', () => {
    // 1.2 MB: a parse that rescans the rest of the text at each block (n^2 = 1e12 steps) would
    // run for hours, far past the test's timeout.
    const out = '<tool_call>{'.repeat(100_000);
    expect(parseToolCalls(out).errors).toHaveLength(100_000);
  });
});

describe('the calculator tool', () => {
  it('is described in the OpenAI function format', () => {
    expect(CALCULATOR_TOOL.type).toBe('function');
    expect(CALCULATOR_TOOL.function.name).toBe('calculator');
    expect(CALCULATOR_TOOL.function.parameters).toMatchObject({
      type: 'object',
      properties: { expression: { type: 'string' } },
      required: ['expression'],
    });
    // It must survive the JSON round trip a chat template does.
    expect(JSON.parse(JSON.stringify([CALCULATOR_TOOL]))[0]).toEqual(CALCULATOR_TOOL);
  });

  it('returns numbers as text and arithmetic errors as "Error: ..." results', () => {
    expect(runCalculator('0.1 + 0.2')).toEqual({ ok: true, value: 0.1 + 0.2, content: '0.3' });
    const failed = runCalculator('5 / 0');
    expect(failed.ok).toBe(false);
    expect(failed.content).toMatch(/^Error: Division by zero in 5 \/ 0/);
  });
});
