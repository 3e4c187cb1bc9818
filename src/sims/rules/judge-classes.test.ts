/**
 * The rules judge's binary classes, drawn where the reference's judge draws them: an unrelated
 * new question is ambiguous (0), a change request is a correction (-1) however it is worded, and
 * a tool result is progress unless it reports an error.
 */
import { describe, expect, it } from 'vitest';
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from '../../rl/judge';
import type { ChatMessage } from '../../rl/messages';
import { parseBoxedScore } from '../../rl/boxed';
import { parseHintVote } from '../../rl/hints';
import { RulesJudge } from './judge';
import { classifyReaction, classifyToolResult } from './reaction';
import { readNextStateRole } from './reading';

const judge = new RulesJudge('binary');
const hintJudge = new RulesJudge('hint');
const verdict = async (next: ChatMessage) => parseBoxedScore(await judge.generate(buildBinaryJudgePrompt('The answer is 18.', next)));

describe('classifyReaction', () => {
  it.each([
    'make it sound more casual',
    'Could you make this less formal?',
    'use simpler words please',
    'remove the bold bits',
    'same thing but without the list',
  ])('a change request is a correction: %s', (reply) => {
    expect(classifyReaction(reply)).toBe('redo');
  });

  it.each(['What is the capital of France?', 'Can you write me a poem about the sea?', 'hmm'])('an unrelated or empty reply is ambiguous: %s', (reply) => {
    expect(classifyReaction(reply)).toBe('unclear');
  });

  it.each(['ok, next one', 'got it, makes sense', 'Thanks! On to the next problem.'])('moving on is progress: %s', (reply) => {
    expect(classifyReaction(reply)).toBe('progress');
  });
});

describe('the rules binary judge', () => {
  it('scores an unrelated new question 0 and a change request -1', async () => {
    expect(await verdict({ role: 'user', content: 'Unrelated: what is the tallest mountain?' })).toBe(0);
    expect(await verdict({ role: 'user', content: 'can you make it more casual' })).toBe(-1);
    expect(await verdict({ role: 'user', content: 'Thanks, HOMEWORK_DONE' })).toBe(1);
  });

  it('reads a tool result as one: a result is progress, an error a failure with a hint', async () => {
    expect(readNextStateRole(buildBinaryJudgePrompt('x', { role: 'tool', content: '72' }))).toBe('tool');
    expect(await verdict({ role: 'tool', content: '72' })).toBe(1);
    expect(await verdict({ role: 'tool', content: 'Error: division by zero' })).toBe(-1);
    expect(classifyToolResult('Traceback (most recent call last)')).toBe('redo');
    const vote = parseHintVote(await hintJudge.generate(buildHintJudgePrompt('x', { role: 'tool', content: 'Error: division by zero' })));
    expect(vote.score).toBe(1);
    expect(vote.hint).toBe('The tool call failed with "Error: division by zero". Make the call so that the tool can run it.');
  });
});
