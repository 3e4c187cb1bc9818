import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../rl/messages';
import { CHARS_PER_TOKEN, overrun, overrunMessage, promptBudget, promptParts } from './prompt-budget';

const TOOL = { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object' } } };

describe('the prompt budget', () => {
  it('is 8 characters a token: 512 positions hold 4,096 characters', () => {
    expect(CHARS_PER_TOKEN).toBe(8);
    expect(promptBudget(512)).toBe(4096);
    expect(promptBudget(40_960)).toBe(327_680);
  });

  it('counts every part the template renders, and the stop strings, each under the name a request gives it', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'What does a.txt say?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } }] },
      { role: 'tool', content: 'milk', tool_call_id: 'call_1' },
    ];
    expect([...promptParts(messages, [TOOL], ['END'])]).toEqual([
      { field: 'messages[0].content', chars: 20 },
      { field: 'messages[1].content', chars: 0 },
      // "call_1" + "read" + '{"path":"a.txt"}': 6 + 4 + 16.
      { field: 'messages[1].tool_calls[0]', chars: 26 },
      { field: 'messages[2].content', chars: 4 },
      { field: 'messages[2].tool_call_id', chars: 6 },
      { field: 'tools[0].type', chars: 8 },
      { field: 'tools[0].function.name', chars: 4 },
      { field: 'tools[0].function.description', chars: 11 },
      // The schema as JSON text: {"type":"object"}.
      { field: 'tools[0].function.parameters', chars: 17 },
      { field: 'stop[0]', chars: 3 },
    ]);
  });

  it('names the part that passes it, with the characters up to and including that part', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'x'.repeat(4000) }];
    // 4,000 + 8 + 4 = 4,012 fit 4,096; the description's 100 more make 4,112.
    const tool = { type: 'function', function: { name: 'read', description: 'd'.repeat(100) } };
    expect(overrun(promptParts(messages, [tool]), 4096)).toEqual({ field: 'tools[0].function.description', chars: 4112 });
    expect(overrun(promptParts(messages, [tool]), 4112)).toBeNull();
    // 4,012 + a stop string of 85 = 4,097.
    expect(overrun(promptParts(messages, [{ type: 'function', function: { name: 'read' } }], ['s'.repeat(85)]), 4096)).toEqual({
      field: 'stop[0]',
      chars: 4097,
    });
  });

  it('stops counting at the part that passes it: a later tool is never written out', () => {
    let written = false;
    const parameters = { toJSON: () => ((written = true), {}) };
    const later = { type: 'function', function: { name: 'b', parameters } };
    expect(overrun(promptParts([], [later]), 4096)).toBeNull();
    expect(written).toBe(true);
    written = false;
    expect(overrun(promptParts([{ role: 'user', content: 'x'.repeat(5000) }], [later]), 4096)?.field).toBe('messages[0].content');
    expect(written).toBe(false);
  });

  it('says what passed, by how much, and what fits', () => {
    expect(overrunMessage({ field: 'tools[0].function.description', chars: 1_000_014 }, 512)).toBe(
      "tools[0].function.description brings the text to 1,000,014 characters, more than this model's 512 positions can hold " +
        '(4,096 characters at most, 8 a token); shorten it or the text before it',
    );
  });
});
