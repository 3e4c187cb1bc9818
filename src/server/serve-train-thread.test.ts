import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl/records';
import { spawnTrainer } from '../workers/node/trainer-thread';
import { runCli } from '../../test/support/cli/run-cli';
import { startTestServer, until, type TestServer } from '../../test/support/cli/serve';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.handle.stop();
  server = null;
});

const ofKind = (s: TestServer, kind: RunRecord['kind']) => s.handle.runFile.all.filter((r) => r.kind === kind);
const CORRECTIONS = ['No, that is wrong. Please redo it so that it rhymes.', 'Still not right: make it shorter and mention the moon.'];

/** One session with headers: each correction closes the turn before it, which the rules judge makes a sample. */
async function talk(s: TestServer, session: string, corrections: readonly string[]): Promise<void> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Write a short poem about cats.' }];
  const headers = { 'X-Session-Id': session, 'X-Turn-Type': 'main' };
  for (const next of corrections) {
    const r = await s.client.chat.completions.create({ model: s.model, messages }, { headers });
    messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: next });
  }
  await s.client.chat.completions.create({ model: s.model, messages }, { headers });
}

const health = async (s: TestServer) => (await fetch(`${s.handle.url}/healthz`)).json();
const versionOf = (r: unknown) => (r as { nextstate: { version: number } }).nextstate.version;

/**
 * Step `step`, which `session`'s correction makes, held where the serving thread trains it: chat
 * requests get 503 with Retry-After meanwhile (streamed or not), the rest is answered, and once
 * it ends the new version serves.
 */
async function refusesDuringStep(s: TestServer, step: number, session: string): Promise<void> {
  const policy = s.handle.loop.policy;
  const train = policy.train.bind(policy);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  policy.train = async (items, onMicroBatch) => {
    await held;
    return train(items, onMicroBatch);
  };
  await talk(s, session, CORRECTIONS.slice(0, 1));
  await until(() => s.handle.loop.stepInFlight() !== null, 60_000, `step ${step} in flight`);

  for (const stream of [false, true]) {
    const res = await fetch(`${s.handle.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: s.model, messages: [{ role: 'user', content: 'hi' }], stream }),
    });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({
      error: { code: 'training', message: expect.stringMatching(new RegExp(`step ${step} holds the policy.*retry after`)) },
    });
  }
  expect(await health(s)).toMatchObject({ ok: true, training: { step, servingMeanwhile: false } });
  expect((await s.client.models.list()).data).toHaveLength(1);

  release();
  await until(() => ofKind(s, 'version_boundary').length === step, 60_000, `step ${step} logged`);
  const after = await s.client.chat.completions.create({ model: s.model, messages: [{ role: 'user', content: 'hi' }] });
  expect(versionOf(after)).toBe(step);
}

describe('nextstate serve trains on a thread of its own', () => {
  it('answers /healthz, /v1/models and chat, streamed too, while a step holds the trainer thread, then serves the version it made', async () => {
    // The trainer thread sleeps inside the step (its thread blocked, as a long CPU step blocks it) until released.
    const hold = new Int32Array(new SharedArrayBuffer(8));
    hold[0] = 1;
    server = await startTestServer(['--batch-size', '2', '--max-tokens', '6'], { trainer: { hold } });
    const s = server;
    await talk(s, 'alice', CORRECTIONS);
    await until(() => Atomics.load(hold, 1) === 1, 60_000, 'the trainer thread inside step 1');
    expect(s.handle.loop.stepInFlight()).toMatchObject({ step: 1 });

    expect(await health(s)).toMatchObject({ ok: true, step: 0, version: 0, training: { step: 1, servingMeanwhile: true }, trainer: { thread: true } });
    expect((await s.client.models.list()).data.map((m) => m.id)).toEqual([s.model]);
    const answered = await s.client.chat.completions.create({ model: s.model, messages: [{ role: 'user', content: 'Are you there?' }] });
    expect(versionOf(answered)).toBe(0);
    const stream = await s.client.chat.completions.create({ model: s.model, messages: [{ role: 'user', content: 'Still there?' }], stream: true });
    let chunks = 0;
    for await (const _ of stream) chunks++;
    expect(chunks).toBeGreaterThan(1);
    // Everything above completed while the step was in flight: the trainer thread is still inside it.
    expect(Atomics.load(hold, 1)).toBe(1);
    expect(s.handle.loop.stepInFlight()).toMatchObject({ step: 1 });
    expect(ofKind(s, 'version_boundary')).toHaveLength(0);

    Atomics.store(hold, 0, 0);
    Atomics.notify(hold, 0);
    await until(() => ofKind(s, 'version_boundary').length === 1, 60_000, 'step 1 logged');
    expect(s.handle.loop.stepInFlight()).toBeNull();
    const after = await s.client.chat.completions.create({ model: s.model, messages: [{ role: 'user', content: 'And now?' }] });
    expect(versionOf(after)).toBe(1);
    expect(ofKind(s, 'train_step')).toMatchObject([{ step: 1, samples: 2, skipped: null }]);
  });

  it('trains on the serving thread when the trainer thread cannot start, and answers chat 503 with Retry-After during such a step', async () => {
    server = await startTestServer(['--batch-size', '1', '--max-tokens', '6'], {
      trainer: {
        spawn: () => {
          throw new Error('no threads here');
        },
      },
    });
    const s = server;
    await talk(s, 'bob', CORRECTIONS.slice(0, 1));
    await until(() => ofKind(s, 'version_boundary').length === 1, 60_000, 'step 1, trained on the serving thread');
    // Said once, on the event stream the program that started the server reads.
    const notes = s.lines.map((l) => JSON.parse(l)).filter((l) => l.type === 'trainer');
    expect(notes).toHaveLength(1);
    expect(notes[0].message).toMatch(/could not start \(no threads here\).*503/);
    expect(s.handle.loop.policy.trainsBeside).toBe(false);
    expect(await health(s)).toMatchObject({ trainer: { thread: false, why: notes[0].message } });

    await refusesDuringStep(s, 2, 'carol');
  });

  it('trains on the serving thread where --max-memory has no room for the trainer thread’s copy, and /healthz says so', async () => {
    server = await startTestServer(['--batch-size', '1', '--max-tokens', '6', '--max-memory', '64K']);
    const s = server;
    const notes = s.lines.map((l) => JSON.parse(l)).filter((l) => l.type === 'trainer' || l.type === 'listening');
    expect(notes).toMatchObject([
      { type: 'trainer', trainsBeside: false, message: expect.stringMatching(/over --max-memory 0\.1 MiB.*503 with Retry-After/) },
      { type: 'listening', trainsBeside: false },
    ]);
    expect(await health(s)).toMatchObject({ ok: true, training: null, trainer: { thread: false, why: notes[0].message } });
    await refusesDuringStep(s, 1, 'erin');
  });

  it('with --no-trainer-thread, steps train on the serving thread as requests wait, and /healthz says so', async () => {
    server = await startTestServer(['--no-trainer-thread']);
    expect(await health(server)).toMatchObject({ trainer: { thread: false, why: expect.stringMatching(/--no-trainer-thread/) } });
    expect(server.handle.loop.policy.refusesDuringSteps).toBe(false);
    const both = await runCli('serve', '--model', 'unused', '--out', join(server.dir, 'both.nsrun'), '--trainer-thread', '--no-trainer-thread');
    expect(both.err.join('\n')).toMatch(/--trainer-thread \(the default\) or --no-trainer-thread, not both/);
    const size = await runCli('serve', '--model', 'unused', '--out', join(server.dir, 'size.nsrun'), '--max-memory', '8GB');
    expect(size.err.join('\n')).toMatch(/--max-memory must be a size in bytes such as 8G/);
  });

  it('stops, its run file final, when stopped while the first step’s trainer thread is still loading', async () => {
    // As a test's SIGTERM or a person's Ctrl-C right after the first step started the thread:
    // the step must end (its samples are journaled for --resume), not wait for a worker that is gone.
    let stopping = false;
    server = await startTestServer(['--batch-size', '1', '--max-tokens', '6'], {
      trainer: {
        spawn: (init) => {
          queueMicrotask(() => {
            stopping = true;
            server!.handle.stopServing();
          });
          return spawnTrainer(init);
        },
      },
    });
    const s = server;
    await talk(s, 'dave', CORRECTIONS.slice(0, 1));
    let finished = false;
    void s.handle.finished.then(() => (finished = true));
    await until(() => stopping, 60_000, 'step 1 to start the trainer thread');
    await until(() => finished, 60_000, 'the server to finish after it was stopped');
    expect(ofKind(s, 'sample')).toHaveLength(1);
    expect(ofKind(s, 'version_boundary')).toHaveLength(0);
  });
});
