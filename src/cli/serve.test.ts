import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionRecord, JudgeResultRecord, RunRecord } from '../rl/records';
import { runCli } from '../../test/support/cli/run-cli';
import { spawnServe, startTestServer, until, type TestServer } from '../../test/support/cli/serve';
import { EnginePolicyService } from '../runtime/policy-service';
import { journalPath, readJournal } from '../runtime/run-journal';

const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'read',
      description: 'Read a file of the workspace',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

let server: TestServer | null = null;
afterEach(async () => {
  await server?.handle.stop();
  server = null;
});

const records = (s: TestServer): readonly RunRecord[] => s.handle.runFile.all;
const ofKind = <K extends RunRecord['kind']>(s: TestServer, kind: K) => records(s).filter((r): r is Extract<RunRecord, { kind: K }> => r.kind === kind);

describe('nextstate serve with the official openai client', () => {
  it('answers with and without streaming, renders tools and tool calls through the chat template, and honours max_tokens, seed and stop', async () => {
    server = await startTestServer(['--max-tokens', '12']);
    const { client, model } = server;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: [{ type: 'text', text: 'What does notes.txt say?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path": "notes.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'buy milk' },
    ];
    const r = await client.chat.completions.create({ model, messages, tools: TOOLS, tool_choice: 'auto', max_completion_tokens: 6, logprobs: true, seed: 3 });
    const policy = server.handle.loop.policy as EnginePolicyService;
    const asTemplate = [
      { role: 'system' as const, content: 'You are a careful assistant.' },
      { role: 'user' as const, content: 'What does notes.txt say?' },
      {
        role: 'assistant' as const,
        content: '',
        tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'read', arguments: '{"path": "notes.txt"}' } }],
      },
      { role: 'tool' as const, content: 'buy milk', tool_call_id: 'call_1' },
    ];
    // The prompt it was answered from is the template's, with the tools listed and the call rendered.
    const prompt = policy.policy.promptText(asTemplate, { tools: TOOLS });
    expect(prompt).toContain('<tools>');
    expect(prompt).toContain('<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>');
    expect(prompt).toContain('<tool_response>\nbuy milk\n</tool_response>');
    expect(r.usage!.prompt_tokens).toBe(policy.policy.promptIds(asTemplate, { tools: TOOLS }).length);
    expect(r.choices[0].message.role).toBe('assistant');
    expect(r.usage!.completion_tokens).toBeLessThanOrEqual(6);
    expect(r.choices[0].logprobs!.content!.length).toBe(r.usage!.completion_tokens);
    for (const t of r.choices[0].logprobs!.content!) expect(t.logprob).toBeLessThanOrEqual(0);
    // The interaction keeps the request as the template saw it: tool calls, call ids and tools.
    const logged = ofKind(server, 'interaction')[0];
    expect(logged.messages).toEqual(asTemplate);
    expect(logged.tools).toEqual(TOOLS);
    expect(logged.tokenIds.length).toBe(r.usage!.completion_tokens);

    // The same seed gives the same answer; streaming gives it in chunks ending with the usage.
    const again = await client.chat.completions.create({ model, messages, tools: TOOLS, max_completion_tokens: 6, seed: 3 });
    expect(again.choices[0].message.content).toBe(r.choices[0].message.content);
    const stream = await client.chat.completions.create({
      model,
      messages,
      tools: TOOLS,
      max_tokens: 6,
      seed: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(r.choices[0].message.content);
    expect(finish).toBe(r.choices[0].finish_reason);
    expect(usage).toEqual(r.usage);

    // max_tokens ends the reply at its length; a stop string cuts the text before it.
    const greedy = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], temperature: 0, max_tokens: 12 });
    expect(greedy.choices[0].finish_reason).toBe('length');
    expect(greedy.usage!.completion_tokens).toBe(12);
    const full = greedy.choices[0].message.content!;
    const cut = full.slice(0, Math.floor(full.length / 2));
    const stopAt = full.slice(cut.length, cut.length + 2);
    const stopped = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      temperature: 0,
      max_tokens: 12,
      stop: [stopAt],
    });
    expect(full.startsWith(stopped.choices[0].message.content!)).toBe(true);
    expect(stopped.choices[0].message.content!.includes(stopAt)).toBe(false);
    expect(stopped.choices[0].finish_reason).toBe('stop');

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([model]);
    const health = await fetch(`${server.handle.url}/healthz`).then((res) => res.json());
    expect(health).toMatchObject({ ok: true, status: 'running', step: 0, version: 0 });
  });

  it('returns the <tool_call> blocks the model writes as tool_calls, streaming and not, and pairs the agent’s next request with them', async () => {
    server = await startTestServer(['--max-tokens', '6']);
    const { client, model } = server;
    // The tiny model writes noise; its text is replaced, so that the reply holds a call as a real model writes it.
    const policy = server.handle.loop.policy;
    const generate = policy.generate.bind(policy);
    const written = 'Let me read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>';
    policy.generate = async (requests, signal) => (await generate(requests, signal)).map((r) => ({ ...r, text: written }));
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What does notes.txt say?' }];
    const call = { type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } };
    const runner = client.chat.completions.stream({ model, messages, tools: TOOLS });
    const streamed = await runner.finalChatCompletion();
    expect(streamed.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Let me read it.', tool_calls: [call] } });
    // Without tools (or with tool_choice none) the text goes out as it was written.
    const none = await client.chat.completions.create({ model, messages, tools: TOOLS, tool_choice: 'none' });
    expect(none.choices[0].message).toEqual({ role: 'assistant', content: written });
    // Two identical conversations: the newest one is the one its next request continues.
    const r = await client.chat.completions.create({ model, messages, tools: TOOLS });
    expect(r.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me read it.', tool_calls: [call] } });
    // The agent runs the tool and sends the result: the same conversation, whose next state is the tool's.
    const next = (await client.chat.completions.create({
      model,
      messages: [
        ...messages,
        r.choices[0].message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: r.choices[0].message.tool_calls![0].id, content: 'buy milk' },
      ],
      tools: TOOLS,
    })) as unknown as { session_id: string; nextstate: { turn: number } };
    const session = (r as unknown as { session_id: string }).session_id;
    expect(next).toMatchObject({ session_id: session, nextstate: { turn: 2 } });
    // The tool's result was the next state: the rules judge reads a result without an error as progress.
    const judged = () => (ofKind(server!, 'judge_result') as JudgeResultRecord[]).filter((j) => j.session === session && j.judge === 'binary');
    await until(() => judged().length === 1, 30_000, 'the judged call');
    expect(judged()[0].score).toBe(1);
  });

  it('trains on a session with headers: judged main turns, hints from corrections, a step, and the next reply from the new version; side turns never become samples', async () => {
    server = await startTestServer(['--batch-size', '2', '--max-tokens', '6', '--method', 'combined']);
    const { client, model } = server;
    const headers = (type: 'main' | 'side', done = false) => ({ 'X-Session-Id': 'alice', 'X-Turn-Type': type, ...(done ? { 'X-Session-Done': 'true' } : {}) });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Write a short poem about cats.' }];
    const corrections = ['No, that is wrong. Please redo it so that it rhymes.', 'Still not right: make it shorter and mention the moon.'];
    for (const next of corrections) {
      const r = await client.chat.completions.create({ model, messages, tools: TOOLS }, { headers: headers('main') });
      expect(r).toMatchObject({ session_id: 'alice', nextstate: { session: 'alice', turnType: 'main', version: 0 } });
      // A memory-upkeep request between two turns: answered and logged, never a next state or a sample.
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Summarize the chat so far.' }] }, { headers: headers('side') });
      messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: next });
    }
    const last = await client.chat.completions.create({ model, messages, tools: TOOLS }, { headers: headers('main', true) });
    expect(last).toMatchObject({ nextstate: { session: 'alice', turn: 5 } });
    await until(() => ofKind(server!, 'version_boundary').length > 0, 60_000, 'a logged training step');

    const interactions = ofKind(server, 'interaction') as InteractionRecord[];
    expect(interactions.map((i) => [i.turn, i.turnType])).toEqual([
      [1, 'main'],
      [2, 'side'],
      [3, 'main'],
      [4, 'side'],
      [5, 'main'],
    ]);
    const results = ofKind(server, 'judge_result') as JudgeResultRecord[];
    // Turns 1 and 3 had next states (the corrections); turn 5 ended the session without one.
    expect(new Set(results.map((j) => j.turn))).toEqual(new Set([1, 3]));
    expect(results.filter((j) => j.judge === 'binary').map((j) => j.score)).toEqual([-1, -1]);
    const hints = results.filter((j) => j.judge === 'hint' && j.accepted);
    expect(hints.map((h) => h.hint)).toEqual(expect.arrayContaining([expect.stringContaining('rhymes'), expect.stringContaining('moon')]));
    const samples = ofKind(server, 'sample');
    expect(samples.map((s) => s.turn).sort()).toEqual([1, 3]);
    expect(ofKind(server, 'session_end')).toMatchObject([{ session: 'alice', reason: 'explicit', mainTurns: 3 }]);
    expect(ofKind(server, 'train_step')).toMatchObject([{ step: 1, samples: 2, skipped: null }]);
    expect(ofKind(server, 'version_boundary')).toMatchObject([{ from: 0, to: 1 }]);

    // The next reply comes from version 1, and the run file can be read while the server runs.
    const after = await client.chat.completions.create(
      { model, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'X-Session-Id': 'bob', 'X-Turn-Type': 'main' } },
    );
    expect((after as unknown as { nextstate: { version: number } }).nextstate.version).toBe(1);
    let inspected: { summary: { steps: number; lastVersion: number }; adapter: { version: number } | null } | null = null;
    for (let i = 0; i < 100 && !(inspected && inspected.summary.steps >= 1); i++) {
      const r = await runCli('inspect', server.file, '--json');
      inspected = r.code === 0 ? JSON.parse(r.out[0]) : null;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(inspected).toMatchObject({ summary: { steps: 1, lastVersion: 1 }, adapter: { version: 1 } });

    await server.handle.stop();
    const peft = join(server.dir, 'peft');
    const exported = await runCli('export', server.file, '--peft', peft, '--samples', join(server.dir, 'samples.jsonl'));
    // Nothing on stdout: what export wrote is said on stderr.
    expect(exported.out).toEqual([]);
    expect(exported.err[0]).toMatch(/adapter of version 1/);
    expect(JSON.parse(readFileSync(join(peft, 'adapter_config.json'), 'utf8')).peft_type).toBe('LORA');
    // Each training row names the tools its prompt listed, so a trainer rebuilds the same prompt.
    const rows = readFileSync(join(server.dir, 'samples.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((row) => row.tools)).toEqual([TOOLS, TOOLS]);
    server = null;
  });

  it('pairs the turns of an agent that sends no session headers by their messages, keeps two such conversations apart, and judges its user’s words without its envelope', async () => {
    server = await startTestServer(['--batch-size', '8', '--max-tokens', '5']);
    const { client, model } = server;
    const talk = async (first: string) => {
      // As OpenClaw does: the system prompt is rebuilt every time, a runtime-context message
      // follows the user's on each request without staying in the history, and every user
      // message carries a timestamp.
      const context = (): OpenAI.ChatCompletionMessageParam => ({ role: 'user', content: `<<<CONTEXT>>> ${Math.random()}` });
      const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `[Sat 2026-12-05 10:12 UTC] ${first}` }];
      const request = () => [{ role: 'system' as const, content: `now: ${Math.random()}` }, ...history, context()];
      const sessions: string[] = [];
      // Only its leading "no" makes the first a correction: a judge that read the stamp first would miss it.
      for (const next of ['[Sat 2026-12-05 10:13 UTC] no, the other one', '[Sat 2026-12-05 10:14 UTC] Thanks!']) {
        const r = (await client.chat.completions.create({ model, messages: request(), tools: TOOLS })) as OpenAI.ChatCompletion & { session_id: string };
        sessions.push(r.session_id);
        history.push(r.choices[0].message as OpenAI.ChatCompletionMessageParam, { role: 'user', content: next });
      }
      const r = (await client.chat.completions.create({ model, messages: request() })) as OpenAI.ChatCompletion & { session_id: string };
      return [...sessions, r.session_id];
    };
    const [a, b] = await Promise.all([talk('Tell me a joke.'), talk('Tell me a story.')]);
    expect(new Set(a).size).toBe(1);
    expect(new Set(b).size).toBe(1);
    expect(a[0]).not.toBe(b[0]);
    const turns = ofKind(server, 'interaction').map((i) => `${i.session}#${i.turn}:${i.turnType}`);
    for (const s of [a[0], b[0]]) expect(turns.filter((t) => t.startsWith(`${s}#`))).toEqual([`${s}#1:main`, `${s}#2:main`, `${s}#3:main`]);
    // Turn 1 was corrected, turn 2 accepted: the next states paired with them say so.
    await until(
      () => (ofKind(server!, 'judge_result') as JudgeResultRecord[]).filter((j) => j.judge === 'binary' && j.session === a[0]).length === 2,
      30_000,
      'both judgements',
    );
    const judged = (ofKind(server, 'judge_result') as JudgeResultRecord[])
      .filter((j) => j.judge === 'binary' && j.session === a[0])
      .sort((x, y) => x.turn - y.turn);
    expect(judged.map((j) => j.score)).toEqual([-1, 1]);
    expect(judged.map((j) => j.nextState)).toEqual([
      { raw: '[Sat 2026-12-05 10:13 UTC] no, the other one', cleaned: 'no, the other one' },
      { raw: '[Sat 2026-12-05 10:14 UTC] Thanks!', cleaned: 'Thanks!' },
    ]);
  });

  it('takes --set and --idle-timeout into the run config; a turn left waiting past the timeout is recorded unjudged, and inspect counts it', async () => {
    server = await startTestServer(['--max-tokens', '3', '--idle-timeout', '1s', '--set', 'preset.judge.binaryVotes=3']);
    expect(server.handle.runFile.header.config).toMatchObject({ preset: { judge: { binaryVotes: 3 }, session: { idleTimeoutMs: 1000 } } });
    const headers = { 'X-Session-Id': 'dave', 'X-Turn-Type': 'main' };
    await server.client.chat.completions.create({ model: server.model, messages: [{ role: 'user', content: 'Name a colour.' }] }, { headers });
    await until(() => ofKind(server!, 'session_end').length === 1, 30_000, 'the idle session to end');
    expect(ofKind(server, 'session_end')[0]).toMatchObject({ session: 'dave', reason: 'timeout', unjudgedTurn: 1 });
    expect(ofKind(server, 'judge_result')).toEqual([]);
    const file = server.file;
    await server.handle.stop();
    server = null;
    const inspected = await runCli('inspect', file);
    expect(inspected.out.join('\n')).toMatch(/unjudged turns: 1 \(.*1 idle past the timeout/);

    server = await startTestServer(['--idle-timeout', 'off']);
    expect(server.handle.runFile.header.config).toMatchObject({ preset: { session: { idleTimeoutMs: 0 } } });
    await server.handle.stop();
    server = null;
    const refused = await runCli('serve', '--model', 'unused', '--out', file, '--resume', '--set', 'preset.judge.binaryVotes=1');
    expect(refused.err.join('\n')).toMatch(/leave out --set/);
  });

  it('--resume takes the command that started the run again, and refuses an option that asks for another config, leaving the run as it was', async () => {
    const started = ['--batch-size', '2', '--max-tokens', '3', '--idle-timeout', '2h', '--set', 'preset.judge.binaryVotes=3'];
    server = await startTestServer(started);
    const { file, modelDir } = server;
    await server.handle.stop();
    server = null;
    const journal = readFileSync(journalPath(file));
    for (const [option, value, recorded] of [
      ['--batch-size', '4', '2'],
      ['--idle-timeout', '30m', '7200000'],
      ['--set', 'preset.judge.binaryVotes=1', '3'],
    ]) {
      const asked = started.map((x, i) => (started[i - 1] === option ? value : x));
      const refused = await runCli('serve', '--model', modelDir, '--out', file, '--port', '0', ...asked, '--resume');
      expect(refused.code).not.toBe(0);
      expect(refused.err.join('\n')).toContain(`${option} ${value} differs from what ${file} recorded (${recorded})`);
      expect(refused.err.join('\n')).toMatch(/leave out --/);
      expect(readFileSync(journalPath(file))).toEqual(journal);
    }
    server = await startTestServer([...started, '--resume'], { file });
    expect(server.handle.runFile.header.config).toMatchObject({ preset: { batch: { size: 2 }, session: { idleTimeoutMs: 7_200_000 } } });
  });

  it('--resume judges a turn whose next state had come but whose judgement was never journaled', async () => {
    const first = await startTestServer(['--batch-size', '8', '--max-tokens', '3']);
    const headers = { 'X-Session-Id': 'erin', 'X-Turn-Type': 'main' };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Name a colour.' }];
    const r = await first.client.chat.completions.create({ model: first.model, messages }, { headers });
    messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: 'No, redo it: a warm one.' });
    await first.client.chat.completions.create({ model: first.model, messages }, { headers });
    await until(() => ofKind(first, 'sample').length === 1, 30_000, "turn 1's sample");
    await first.handle.stop();
    // As a kill -9 while turn 1 was judged leaves the journal: its interactions, none of its judgement.
    const journal = journalPath(first.file);
    const lines = readFileSync(journal, 'utf8').split('\n');
    const judgement = (line: string) => /"kind":"(judge_vote|judge_result|sample)"/.test(line);
    writeFileSync(journal, lines.filter((line) => !judgement(line)).join('\n'));

    server = await startTestServer(['--resume'], { file: first.file });
    expect(server.lines.map((l) => JSON.parse(l)).find((e) => e.type === 'resumed')).toMatchObject({ waiting: 1, unjudged: 1, interrupted: 0 });
    await until(() => ofKind(server!, 'sample').length === 1, 30_000, 'turn 1 judged again');
    expect(ofKind(server, 'judge_result').find((j) => j.judge === 'binary')).toMatchObject({ session: 'erin', turn: 1, score: -1 });
  });

  it('--resume buffers, once, the sample of a turn whose judgement was journaled but whose sample never was', async () => {
    const first = await startTestServer(['--batch-size', '8', '--max-tokens', '3']);
    const headers = { 'X-Session-Id': 'erin', 'X-Turn-Type': 'main' };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Name a colour.' }];
    const r = await first.client.chat.completions.create({ model: first.model, messages }, { headers });
    messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: 'No, redo it: a warm one.' });
    await first.client.chat.completions.create({ model: first.model, messages }, { headers });
    await until(() => ofKind(first, 'sample').length === 1, 30_000, "turn 1's sample");
    const [trained] = ofKind(first, 'sample');
    await first.handle.stop();
    // As a kill -9 after turn 1's judgement was committed leaves the journal: its judge records, no sample.
    const journal = journalPath(first.file);
    writeFileSync(
      journal,
      readFileSync(journal, 'utf8')
        .split('\n')
        .filter((line) => !line.includes('"kind":"sample"'))
        .join('\n'),
    );

    server = await startTestServer(['--resume'], { file: first.file });
    expect(server.lines.map((l) => JSON.parse(l)).find((e) => e.type === 'resumed')).toMatchObject({ waiting: 1, unjudged: 0 });
    await until(() => ofKind(server!, 'sample').length === 1, 30_000, "turn 1's sample buffered again");
    // The sample the judged turn gave, not judged again: the same advantages, and no new judge record.
    expect(ofKind(server, 'sample')[0]).toMatchObject({
      session: 'erin',
      turn: 1,
      reward: trained.reward,
      perToken: trained.perToken,
      opdWeight: trained.opdWeight,
    });
    expect(ofKind(server, 'judge_result')).toHaveLength(ofKind(first, 'judge_result').length);
    expect(ofKind(server, 'runtime_event').at(-1)?.message).toContain('1 judged turn whose sample is buffered again');
    await server.handle.stop();
    // Once: a second resume finds its sample record and adds nothing.
    server = await startTestServer(['--resume'], { file: first.file });
    expect(ofKind(server, 'sample').filter((s) => s.session === 'erin' && s.turn === 1)).toHaveLength(1);
    expect(ofKind(server, 'runtime_event').at(-1)?.message).not.toContain('buffered again');
  });

  it('after kill -9, --resume continues from the last step with every committed record, and the session goes on, judging the turn that waited', async () => {
    const first = await startTestServer(['--batch-size', '2', '--max-tokens', '4']);
    const { modelDir, model } = first;
    await first.handle.stop();
    // A fresh file for the child process: the first server only made the fixture and a folder.
    const childFile = join(first.dir, 'killed.nsrun');
    const { child, url, exited } = await spawnServe(['--model', modelDir, '--out', childFile, '--batch-size', '2', '--max-tokens', '4']);
    const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const headers = { 'X-Session-Id': 'carol', 'X-Turn-Type': 'main' };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Name a colour.' }];
    for (const next of ['No, redo it: name a warm colour.', 'Wrong again, please give a different one.', 'Please redo it once more.']) {
      const r = await client.chat.completions.create({ model, messages }, { headers });
      messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: next });
    }
    await until(() => readJournal(journalPath(childFile)).records.some((r) => r.kind === 'version_boundary'), 60_000, 'a journaled step');
    child.kill('SIGKILL');
    expect(await exited).toBeNull();
    const before = readJournal(journalPath(childFile)).records;

    // Turn 3 was answered and journaled; its next state had not come yet.
    expect(before.some((r) => r.kind === 'judge_result' && r.turn === 3)).toBe(false);

    server = await startTestServer(['--resume'], { file: childFile });
    expect(server.lines.map((l) => JSON.parse(l)).find((e) => e.type === 'resumed')).toMatchObject({ step: 1, version: 1, waiting: 1, interrupted: 0 });
    // Nothing committed before the kill is lost: the resumed log starts with all of it.
    expect(records(server).slice(0, before.length)).toEqual(before);
    expect(server.handle.loop.snapshot()).toMatchObject({ step: 1, version: 1 });
    const r = (await server.client.chat.completions.create({ model, messages }, { headers })) as unknown as { nextstate: { turn: number; version: number } };
    // The session's turns are numbered on from the log, never reusing (session, turn).
    expect(r.nextstate).toEqual({ session: 'carol', turn: 4, turnType: 'main', version: 1 });
    // That request is turn 3's next state, a correction: turn 3 is judged as one.
    await until(() => ofKind(server!, 'judge_result').some((j) => j.turn === 3 && j.judge === 'binary'), 30_000, "turn 3's judgement");
    expect(ofKind(server, 'judge_result').find((j) => j.turn === 3 && j.judge === 'binary')).toMatchObject({ session: 'carol', score: -1 });
  });
});
