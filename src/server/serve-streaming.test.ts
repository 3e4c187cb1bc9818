import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../models/source-node';
import { isReadable, readReply, readTokens } from '../rl/readable-text';
import type { InteractionRecord } from '../rl/records';
import { startTestServer, until, type TestServer } from '../../test/support/cli/serve';
import type { EnginePolicyService, PolicyReply } from '../runtime/policy-service';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.handle.stop();
  server = null;
});

/** vLLM's fields beside OpenAI's: what a request with return_token_ids gets. */
type WithIds<C> = Omit<C, 'choices'> & { prompt_token_ids?: number[]; choices: (C extends { choices: (infer X)[] } ? X & { token_ids?: number[] } : never)[] };

/** A stream's chunks and what they add up to. */
async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  const chunks: WithIds<OpenAI.ChatCompletionChunk>[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const choices = chunks.flatMap((c) => c.choices);
  return {
    chunks,
    /** Chunks with text, in order. */
    texts: choices.map((c) => c.delta.content ?? '').filter(Boolean),
    content: choices.map((c) => c.delta.content ?? '').join(''),
    logprobs: choices.flatMap((c) => c.logprobs?.content ?? []),
    tokenIds: choices.flatMap((c) => c.token_ids ?? []),
    promptIds: chunks.find((c) => c.prompt_token_ids)?.prompt_token_ids,
    finish: choices.map((c) => c.finish_reason).find(Boolean),
    toolCalls: choices.flatMap((c) => c.delta.tool_calls ?? []),
    session: (chunks.at(-1) as unknown as { session_id?: string }).session_id,
  };
}

const TOOLS = [{ type: 'function' as const, function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

describe('nextstate serve streams a reply token by token to the official openai client', () => {
  it('in many chunks that add up to the reply without streaming for the same seed, token ids and log-probs included; never past a stop', async () => {
    server = await startTestServer(['--max-tokens', '16']);
    const { client, model } = server;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tell me a story about a fox.' }];
    const ask = { model, messages, seed: 11, logprobs: true, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const whole = (await client.chat.completions.create(ask)) as WithIds<OpenAI.ChatCompletion>;
    const streamed = await collect(await client.chat.completions.create({ ...ask, stream: true }));
    expect(streamed.texts.length).toBeGreaterThan(1);
    expect(streamed.content).toBe(whole.choices[0].message.content);
    expect(streamed.finish).toBe(whole.choices[0].finish_reason);
    expect(streamed.logprobs).toEqual(whole.choices[0].logprobs!.content);
    expect(whole.choices[0].token_ids).toHaveLength(whole.usage!.completion_tokens);
    expect(streamed.tokenIds).toEqual(whole.choices[0].token_ids);
    expect(whole.prompt_token_ids).toHaveLength(whole.usage!.prompt_tokens);
    expect(streamed.promptIds).toEqual(whole.prompt_token_ids);
    // The ids are the ones the run file records.
    const logged = server.handle.runFile.all.filter((r): r is InteractionRecord => r.kind === 'interaction');
    expect(logged.map((r) => r.tokenIds)).toEqual([whole.choices[0].token_ids, whole.choices[0].token_ids]);
    expect(logged[0].promptIds).toEqual(whole.prompt_token_ids);

    // A stop string in the middle of the greedy reply: the stream ends before it, as the whole reply does.
    const greedy = { model, messages, temperature: 0, max_tokens: 16 };
    const full = (await client.chat.completions.create(greedy)).choices[0].message.content!;
    const stop = full.slice(Math.floor(full.length / 2), Math.floor(full.length / 2) + 2);
    const stopped = (await client.chat.completions.create({ ...greedy, stop: [stop] })).choices[0];
    const streamedStop = await collect(await client.chat.completions.create({ ...greedy, stop: [stop], stream: true }));
    expect(streamedStop.content).toBe(stopped.message.content);
    expect(streamedStop.content).not.toContain(stop);
    expect(full.startsWith(streamedStop.content)).toBe(true);
    expect(streamedStop.finish).toBe('stop');
  });

  it('streams requests merged into one batch, each its own reply; one whose client goes away stops while the rest go on', async () => {
    server = await startTestServer(['--max-tokens', '400']);
    const { client, model } = server;
    const { loop } = server.handle;
    const policy = loop.policy;
    const generate = policy.generate.bind(policy);
    const batches: PolicyReply[][] = [];
    // The first batch waits until two more requests queue behind it: those two then share the next batch.
    let held = false;
    policy.generate = async (requests, signal, hooks) => {
      if (!held) {
        held = true;
        await until(() => loop.snapshot().generationQueue >= 2, 30_000, 'two queued requests');
      }
      const replies = await generate(requests, signal, hooks);
      batches.push(replies);
      return replies;
    };
    const talk = (content: string, seed: number, max_tokens = 12) =>
      client.chat.completions.create({
        model,
        messages: [{ role: 'user', content }],
        seed,
        max_tokens,
        stream: true,
        return_token_ids: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
    const first = await talk('Name a bird.', 1);
    const leaving = await talk('Write a very long story.', 2, 400);
    const staying = await talk('Count to ten.', 3);
    const got = [await collect(first)];
    for await (const chunk of leaving) {
      if (chunk.choices[0]?.delta.content) break;
    }
    leaving.controller.abort();
    got.push(await collect(staying));

    expect(batches.map((b) => b.length)).toEqual([1, 2]);
    // The one that left stopped early, 'aborted'; the one beside it got its whole reply.
    expect(batches[1].map((r) => r.finishReason).sort()).toEqual(['aborted', 'length']);
    expect(batches[1].find((r) => r.finishReason === 'aborted')!.tokenIds.length).toBeLessThan(400);
    const logged = server.handle.runFile.all.filter((r): r is InteractionRecord => r.kind === 'interaction');
    expect(logged).toHaveLength(2);
    for (const g of got) {
      const record = logged.find((r) => r.session === g.session)!;
      expect(g.texts.length).toBeGreaterThan(1);
      expect(g.content).toBe(readReply(record.response, record.tokenTexts));
      expect(g.tokenIds).toEqual(record.tokenIds);
    }
  });

  it('holds back a tool call’s tag, sends the prose before it as it comes and the call as delta.tool_calls', async () => {
    server = await startTestServer(['--max-tokens', '64']);
    const { client, model } = server;
    // The tiny model writes noise: this policy draws the tokens of a reply as a real model writes it, one by one.
    const policy = server.handle.loop.policy as EnginePolicyService;
    const tokenizer = policy.policy.tokenizer;
    const written = 'Let me read the notes first.\n<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>';
    const ids = tokenizer.encode(written, false);
    policy.generate = async (requests, _signal, hooks) => {
      const replies: PolicyReply[] = [];
      for (const [i] of requests.entries()) {
        for (const id of ids) {
          hooks?.onToken?.(i, id, -0.25);
          await new Promise((r) => setImmediate(r));
        }
        const tokenTexts = ids.map((id) => tokenizer.decode([id], false));
        replies.push({
          text: tokenizer.decode(ids),
          tokenIds: ids,
          logprobs: ids.map(() => -0.25),
          tokenTexts,
          version: 0,
          finishReason: 'stop',
          startedAt: 0,
          finishedAt: 0,
        });
      }
      return replies;
    };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What do my notes say?' }];
    const call = { type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } };
    const whole = await client.chat.completions.create({ model, messages, tools: TOOLS });
    expect(whole.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Let me read the notes first.', tool_calls: [call] } });

    const streamed = await collect(await client.chat.completions.create({ model, messages, tools: TOOLS, stream: true }));
    expect(streamed.texts.length).toBeGreaterThan(1);
    expect(streamed.content).toBe('Let me read the notes first.');
    for (const t of streamed.texts) expect(t).not.toContain('<');
    expect(streamed.toolCalls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), ...call }]);
    expect(streamed.finish).toBe('tool_calls');
    // The client's own stream helper assembles the same message.
    const assembled = await client.chat.completions.stream({ model, messages, tools: TOOLS }).finalChatCompletion();
    expect(assembled.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Let me read the notes first.', tool_calls: [call] } });
  });
});

/**
 * The served model writes `ids` whatever it is asked, each token with its own log-prob under the
 * model (the sampler's pick is replaced, the rest of serving is as it is). Each request starts
 * again at the first token.
 */
function writes(server: TestServer, ids: readonly number[]): { request: () => void } {
  const be = (server.handle.loop.policy as EnginePolicyService).policy.model.backend;
  let k = 0;
  be.sample = async (logits) => {
    const rows = logits.shape[0];
    const picked = Int32Array.from({ length: rows }, () => ids[Math.min(k, ids.length - 1)]);
    k++;
    const { logp, entropy } = be.logSoftmaxGather(logits, picked);
    const read = await be.read(logp);
    be.dispose(logp);
    be.dispose(entropy);
    return { ids: picked, logp: read };
  };
  return { request: () => (k = 0) };
}

describe("nextstate serve sends the demo model's byte tokens as text", () => {
  it('streamed as the reply without streaming reads, escapes for bytes that make no character, each token recorded and read back whole', async () => {
    const model = join(packageRoot(), 'public/models/storyteller-demo');
    server = await startTestServer(['--max-tokens', '32'], { model });
    const { client } = server;
    const tokenizer = (server.handle.loop.policy as EnginePolicyService).policy.tokenizer;
    // ✓, 日本 and 😀 are byte tokens of the demo model; then a BEL, and a ✓ cut after two of its bytes.
    const ids = [...tokenizer.encode('It’s ✓ 日本 😀 ok', false), tokenizer.encode('\u0007', false).at(-1)!, ...tokenizer.encode('✓', false).slice(1, 3)];
    const texts = tokenizer.tokenTexts(ids);
    expect(texts.filter((t) => t.startsWith('<0x')).length).toBe(16);
    const shown = 'It’s ✓ 日本 😀 ok⟨0x07⟩⟨0xE2⟩⟨0x9C⟩';
    const forced = writes(server, ids);
    const ask = (content: string) =>
      ({
        model: server!.model,
        messages: [{ role: 'user', content }],
        max_tokens: ids.length,
        logprobs: true,
        return_token_ids: true,
      }) as OpenAI.ChatCompletionCreateParamsNonStreaming;

    forced.request();
    const whole = (await client.chat.completions.create(ask('Tell me a story.'))) as unknown as WithIds<OpenAI.ChatCompletion> & { session_id: string };
    forced.request();
    const streamed = await collect(await client.chat.completions.create({ ...ask('Tell me another story.'), stream: true }));
    expect(whole.choices[0].token_ids).toEqual(ids);
    expect(whole.choices[0].message.content).toBe(shown);
    expect(streamed.content).toBe(shown);
    expect(streamed.texts.length).toBeGreaterThan(5);
    for (const t of streamed.texts) expect(isReadable(t), t).toBe(true);
    // Each token as records keep it, with the bytes it stands for; the same streamed or not (the prompts differ, so the log-probs do).
    const tokens = (l: readonly { token: string; bytes: number[] | null }[]) => l.map(({ token, bytes }) => ({ token, bytes }));
    expect(tokens(streamed.logprobs)).toEqual(tokens(whole.choices[0].logprobs!.content!));
    expect(streamed.logprobs.map((l) => l.token)).toEqual(texts);
    expect(streamed.logprobs.at(-1)!.bytes).toEqual([0x9c]);
    expect(streamed.logprobs[0].bytes).toEqual([...Buffer.from(texts[0])]);

    // The run file keeps the text as decoded and each token's bytes: read back, no "�", nothing lost.
    const logged = server.handle.runFile.all.filter((r): r is InteractionRecord => r.kind === 'interaction');
    expect(logged).toHaveLength(2);
    for (const r of logged) {
      expect(r.tokenIds).toEqual(ids);
      expect(r.tokenTexts).toEqual(texts);
      expect(readReply(r.response, r.tokenTexts)).toBe(shown);
      const read = readTokens(r.response, r.tokenTexts!);
      expect(read.aligned).toBe(ids.length);
      for (const t of read.tokens) expect(isReadable(t.text) && !t.text.includes('⟨?⟩'), t.text).toBe(true);
    }

    // The agent's next request repeats the reply as it got it: that pairs it with its session, and after a resume too.
    const next = (content: string, reply: string) => ({
      model: server!.model,
      messages: [
        { role: 'user' as const, content },
        { role: 'assistant' as const, content: reply },
        { role: 'user' as const, content: 'Thanks!' },
      ],
      max_tokens: 2,
    });
    forced.request();
    const paired = (await client.chat.completions.create(next('Tell me another story.', streamed.content))) as OpenAI.ChatCompletion & { session_id: string };
    expect(paired.session_id).toBe(streamed.session);
    const file = server.file;
    await server.handle.stop();
    server = await startTestServer(['--resume'], { model, file });
    writes(server, ids);
    const resumed = (await server.client.chat.completions.create(next('Tell me a story.', whole.choices[0].message.content!))) as OpenAI.ChatCompletion & {
      session_id: string;
    };
    expect(resumed.session_id).toBe(whole.session_id);
  });
});
