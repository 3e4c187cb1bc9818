import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionRecord } from '../rl/records';
import { runCli } from '../../test/support/cli/run-cli';
import { startTestServer, type TestServer } from '../../test/support/cli/serve';
import { readJournal, journalPath } from '../runtime/run-journal';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.handle.stop();
  server = null;
});

/** Requests per level, split among the clients; each client is one session that goes turn after turn. */
const REQUESTS = 16;

describe('nextstate serve under load on 127.0.0.1', () => {
  it('answers 1, 4 and 16 concurrent clients with every request logged once, complete, and concurrent ones batched', async () => {
    server = await startTestServer(['--batch-size', '4', '--max-tokens', '4']);
    const { client, model } = server;
    const policy = server.handle.loop.policy;
    const generate = policy.generate.bind(policy);
    const batchSizes: number[] = [];
    policy.generate = (requests, signal) => {
      batchSizes.push(requests.length);
      return generate(requests, signal);
    };
    const answered: string[] = [];
    for (const clients of [1, 4, 16]) {
      batchSizes.length = 0;
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          const session = `load-${clients}-${c}`;
          const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `Client ${c}: tell me something.` }];
          for (let turn = 1; turn <= REQUESTS / clients; turn++) {
            const r = (await client.chat.completions.create(
              { model, messages, seed: turn },
              { headers: { 'X-Session-Id': session, 'X-Turn-Type': 'main' } },
            )) as OpenAI.ChatCompletion & {
              nextstate: { session: string; turn: number };
            };
            expect(r.nextstate).toMatchObject({ session, turn });
            answered.push(`${session}#${turn}`);
            messages.push({ role: 'assistant', content: r.choices[0].message.content ?? '' }, { role: 'user', content: 'Please redo it, that is wrong.' });
          }
        }),
      );
      if (clients === 16) expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    }
    await server.handle.stop();
    const logged = readJournal(journalPath(server.file)).records.filter((r): r is InteractionRecord => r.kind === 'interaction');
    expect(logged.map((r) => `${r.session}#${r.turn}`).sort()).toEqual(answered.sort());
    for (const r of logged) {
      expect(r.tokenIds.length).toBe(r.logprobs.length);
      expect(r.tokenTexts!.length).toBe(r.tokenIds.length);
      expect(r.messages.length).toBe(2 * r.turn - 1);
    }
    // The run file holds exactly what the journal does.
    const inspected = JSON.parse((await runCli('inspect', server.file, '--json')).out[0]);
    expect(inspected.summary.records).toBe(readJournal(journalPath(server.file)).records.length);
    expect(inspected.summary.byKind.interaction).toBe(3 * REQUESTS);
    server = null;
  });
});
