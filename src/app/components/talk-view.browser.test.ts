/**
 * Talk yourself as the person meets it: before the first message, what to write (a story model
 * continues a story beginning); the reply box's words for what it is waiting for; and the chat
 * kept scrolled to the newest answer.
 */
import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import type { RunRecord } from '../../rl/records';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { recordedRun, render } from '../../../test/support/views/testing';
import { reactive } from '../../../test/support/views/testing-state.svelte';
import type { PolicyInfo } from '../../workers/browser/policy-host';
import TalkView from './TalkView.svelte';

const controller = labControllers('talk-test');

const policy = (hasChatTemplate: boolean): PolicyInfo => ({
  label: 'demo',
  backend: 'cpu',
  architecture: 'LlamaForCausalLM',
  parameters: 260_032,
  weightBytes: 1_040_128,
  hasChatTemplate,
  toolCallTags: false,
  f16: false,
  weightFormat: 'f32',
  files: {},
  commit: null,
});

/** The recorded run's conversations in one session, so the chat holds many turns. */
function longConversation(): RunRecord[] {
  return recordedRun().map((r) => ('session' in r && typeof r.session === 'string' ? ({ ...r, session: 's0' } as RunRecord) : r));
}

describe('TalkView', () => {
  it('says what a story model’s first message is, and what the reply box waits for', async () => {
    const lab = await controller();
    lab.policyInfo = policy(false);
    lab.talkTurn = { messages: [] };
    using view = render(TalkView, { lab, records: [] });
    const first = view.target.querySelector('[data-testid="talk-first"]')!;
    expect(first.textContent).toMatch(/story model .*your first message is the beginning of a story/s);

    lab.liveRunId = 'live';
    lab.openRun = { id: 'live' } as never;
    flushSync();
    const box = view.target.querySelector('textarea')!;
    expect(box.placeholder).toBe('Write a story beginning, such as “Once upon a time, there was a little cat.”');
    lab.talkTurn = { messages: [{ role: 'user', content: 'Once upon a time' }] };
    flushSync();
    expect(box.placeholder).toBe('Say what you think of the answer…');
    lab.talkTurn = null;
    flushSync();
    expect(box.placeholder).toBe('Wait for the answer…');

    // A chat model: a first message like any other.
    lab.policyInfo = policy(true);
    lab.talkTurn = { messages: [] };
    flushSync();
    expect(view.target.querySelector('[data-testid="talk-first"]')!.textContent!.trim()).toBe('Write the first message of a new conversation.');
    expect(box.placeholder).toBe('Write your first message…');
  });

  it('keeps the newest answer in view', async () => {
    const lab = await controller();
    const records = longConversation();
    const cut = records.findLastIndex((r) => r.kind === 'interaction');
    const props = reactive({ lab, records: records.slice(0, cut) });
    using view = render(TalkView, props, { width: '320px' });
    const chat = view.target.querySelector<HTMLElement>('ol.chat')!;
    const atEnd = () => chat.scrollHeight - chat.clientHeight - chat.scrollTop <= 2;
    // More turns than the box shows at once: it scrolls, and shows its end.
    expect(chat.scrollHeight).toBeGreaterThan(chat.clientHeight);
    expect(atEnd()).toBe(true);
    // The person scrolled up to read; a new answer arrives and comes into view.
    chat.scrollTop = 0;
    props.records = records;
    flushSync();
    expect(atEnd()).toBe(true);
  });
});
