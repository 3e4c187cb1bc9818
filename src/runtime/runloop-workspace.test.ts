/**
 * The homework workspace end to end in Node on the CPU engine: the teacher scenario's workspace
 * variant with the tiny random Qwen3 fixture (the real Qwen3 chat template lists the read, write
 * and append tools), the rules users and judges, a folder workspace, until the first homework
 * is judged.
 *
 * A random model never writes a tool call, so the policy's words come from a script that plays
 * a capable agent (read the file, answer, rewrite, append, confirm); everything else is the real
 * thing: its tokens are the tokenizer's, their log-probs the tiny model's, and the run loop,
 * the tools, the simulated users, the judges, the trainer and the records are the ones a run uses.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, validatingSink } from '../../test/support/runtime/headless';
import { CpuBackend } from '../gpu/cpu/backend';
import type { ChatMessage } from '../rl/messages';
import { usesToolCallTags } from '../rl/tool-calls';
import type { RunRecord } from '../rl/records';
import { trainingSamples } from '../storage/exports';
import { createScenario } from '../sims/scenarios/index';
import { WORKSPACE_TOOLS } from '../sims/workspace/tools';
import { WORKSPACE_SYSTEM_PROMPT } from '../sims/workspace/homework';
import { checkWorkspacePolicy, WorkspacePolicyError } from './agent-turn';
import type { PolicyReply, PolicyRequest, PolicyService } from './policy-service';
import { loadProblems } from './problems';
import { exampleConfig, parseRunConfig, type RunConfig } from './run-config';
import { RunLoop } from './runloop';
import { createNodeServices, readTextFile } from './services-node';
import { folderWorkspaces } from './workspace-node';

const call = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const AI_LOOKING = (n: string) => `**Solution:**\n\n1. Work it out step by step.\n\n**Final Answer:** ${n}`;
const PLAIN = (n: string) => `First I add up what we know, 2 + 3 = 5, then I work through the rest the same way and get ${n} in the end.`;
const COMMENTS = (n: string) =>
  'Great job reading the problem carefully, you did well to write every step out in order so it is easy to follow. ' +
  `Your working is clear and your numbers add up, and the correct answer is ${n}, so compare your last line with it. ` +
  'Keep explaining each step in a sentence like this, it shows your thinking and makes checking easy. ' +
  'Nice and patient work overall, and keep it up on the next problems too.';

/** What a capable agent says next in this conversation. */
function agentSays(messages: readonly ChatMessage[]): string {
  const task = messages.find((m) => m.role === 'user')!.content;
  // The teacher scenario's attempt for the evaluation's file is asked in a plain chat, without one.
  const path = /homework\/\d+\.txt/.exec(task)?.[0];
  if (!path) return PLAIN('42');
  const grading = task.startsWith("I'm grading");
  const answer = grading ? /Correct answer: (\S+)/.exec(task)![1] : '42';
  const last = messages.at(-1)!;
  if (last.role === 'tool') {
    if (last.content.startsWith('Error:')) return call('read', { path });
    if (last.content.startsWith('Problem:')) return grading ? COMMENTS(answer) : AI_LOOKING(answer);
    return `Done, I appended it to the end of ${path}.`;
  }
  if (/to the end of/.test(last.content)) return call('append', { path, content: `\n${grading ? COMMENTS(answer) : PLAIN(answer)}\n` });
  // The first request: the student's agent reads the file; the teacher's first mistypes its name.
  if (messages.length === 2) return call('read', { path: grading ? 'homework/99.txt' : path });
  return PLAIN(answer);
}

/** The policy's replies from the script, tokenized by its tokenizer and scored by its weights; it trains for real. */
function scriptedPolicy(inner: PolicyService, encode: (text: string) => number[], decode: (id: number) => string): PolicyService {
  return {
    label: `${inner.label} (scripted words)`,
    servingVersion: () => inner.servingVersion(),
    score: (items, teacher) => inner.score(items, teacher),
    train: (items, onMicroBatch) => inner.train(items, onMicroBatch),
    exportAdapter: () => inner.exportAdapter(),
    restore: (files, version) => inner.restore(files, version),
    async generate(requests: PolicyRequest[]): Promise<PolicyReply[]> {
      return Promise.all(
        requests.map(async (r) => {
          const text = agentSays(r.messages);
          const tokenIds = encode(text);
          const [logprobs] = await inner.score([{ messages: r.messages, tokenIds, tools: r.tools }], 'current');
          const at = Date.now();
          return { text, tokenIds, logprobs, tokenTexts: tokenIds.map(decode), version: inner.servingVersion(), startedAt: at, finishedAt: at };
        }),
      );
    },
  };
}

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

describe('the homework workspace end to end on the tiny fixture (teacher scenario, one homework)', () => {
  it('runs the student phase, then the teacher phase, over one folder of files, judging tool results and recording every change', async () => {
    // Room for the tools the template lists and both phases' turns.
    const { dir } = await tinyModel({ family: 'qwen3', positions: 4096 });
    const config: RunConfig = {
      ...exampleConfig('teacher', dir),
      scenario: { id: 'teacher', homework: 'workspace' },
      problems: { source: 'builtin', count: 3 },
      schedule: { concurrentSessions: 1, steps: 1, evalEvery: 1, evalProblems: 1, evalVotes: 1 },
    };
    // Training on the homework's turns is the served agent's path (samples with their prompts'
    // tools); here a full batch would cost half a minute of CPU, so the run stops once the first
    // homework is judged and the first evaluation is written, before a batch fills.
    config.preset.batch.size = 16;
    config.sampling.policy.maxNewTokens = 8;
    const parsed = parseRunConfig(JSON.parse(JSON.stringify(config)));
    const services = await createNodeServices(parsed, new CpuBackend());
    const tok = services.policyModel!.tokenizer;
    // The Qwen3 template lists the tools and reads <tool_call> back.
    checkWorkspacePolicy('tiny', { hasChatTemplate: true, toolCallTags: usesToolCallTags(tok.chatTemplateText) });
    expect(services.policyModel!.promptText([{ role: 'user', content: 'hi' }], { tools: WORKSPACE_TOOLS })).toContain('"name": "append"');
    const root = await mkdtemp(join(tmpdir(), 'nextstate-homework-'));
    roots.push(root);
    const problems = await loadProblems(parsed, createScenario(parsed.scenario), readTextFile);
    const records: RunRecord[] = [];
    const policy = scriptedPolicy(
      services.policy,
      (text) => tok.encode(text, false),
      (id) => tok.decode([id], false),
    );
    const homework = (r: { session?: string }) => r.session === 's0.student' || r.session === 's0';
    const loop: RunLoop = new RunLoop(parsed, { ...services, policy, workspaces: folderWorkspaces(root) }, problems, validatingSink(records), {
      onRecord: () => {
        const judged = records.filter((r) => r.kind === 'sample' && homework(r)).length;
        if (judged === 10 && records.some((r) => r.kind === 'evaluation')) loop.stop();
      },
    });
    expect(await loop.run()).toMatchObject({ status: 'stopped', step: 0, version: 0 });

    const interactions = of(records, 'interaction').filter(homework);
    const student = interactions.filter((i) => i.session === 's0.student');
    const teacher = interactions.filter((i) => i.session === 's0');
    // The student phase: read, an AI-looking answer, the rewrite, the append, the confirmation.
    expect(student.map((i) => i.response.split('\n')[0])).toEqual([
      '<tool_call>',
      '**Solution:**',
      expect.stringMatching(/^First I add up/),
      '<tool_call>',
      'Done, I appended it to the end of homework/0.txt.',
    ]);
    for (const i of interactions) {
      expect(i.tools).toEqual(WORKSPACE_TOOLS);
      expect(i.messages[0]).toEqual({ role: 'system', content: WORKSPACE_SYSTEM_PROMPT });
    }
    // A tool result is the next request's last message; the user sees only the replies.
    expect(student[1].messages.at(-1)).toEqual({ role: 'tool', content: `Problem:\n${problems.train[0].question}\n\nSolution:\n` });
    expect(student[2].messages.at(-1)!.content).toMatch(/rewrite|redo/);
    expect(student[3].messages.at(-1)!.content).toContain('to the end of homework/0.txt');
    expect(student[4].messages.at(-1)!.content).toMatch(/^Appended \d+ characters to the end of homework\/0\.txt/);
    // The teacher phase reads the same file, with the student's appended answer in it.
    expect(teacher[1].messages.at(-1)!.content).toMatch(/^Error: homework\/99\.txt does not exist\. The workspace holds homework\/0\.txt\.$/);
    expect(teacher[2].messages.at(-1)!.content).toContain('First I add up');
    expect(teacher.at(-1)!.response).toMatch(/^Done, I appended it/);
    const ends = of(records, 'session_end');
    expect(ends.map((e) => [e.session, e.mainTurns])).toEqual(
      expect.arrayContaining([
        ['s0.student', 5],
        ['s0', 5],
      ]),
    );

    // Tool results are judged by the tool rules: a result +1 and no hint, an error -1 with one.
    const binary = (session: string, turn: number) =>
      of(records, 'judge_result').find((r) => r.session === session && r.turn === turn && r.judge === 'binary')!;
    const hint = (session: string, turn: number) => of(records, 'judge_result').find((r) => r.session === session && r.turn === turn && r.judge === 'hint')!;
    expect(binary('s0.student', 1).score).toBe(1);
    expect(hint('s0.student', 1).accepted).toBe(false);
    expect(binary('s0', 1).score).toBe(-1);
    expect(hint('s0', 1).hint).toContain('homework/99.txt does not exist');
    expect(binary('s0.student', 2).score).toBe(-1); // the student asked for a rewrite
    expect(binary('s0.student', 3).score).toBe(1); // and then for the file
    expect(binary('s0.student', 5).score).toBe(1); // HOMEWORK_DONE

    // Every change to the file is recorded, and the folder holds what the last record says.
    const files = of(records, 'workspace_file');
    expect(files.filter((f) => f.workspace === 's0').map((f) => [f.session, f.turn, f.op])).toEqual([
      ['s0.student', undefined, 'write'],
      ['s0.student', 4, 'append'],
      ['s0', 4, 'append'],
    ]);
    const final = files.filter((f) => f.workspace === 's0').at(-1)!.content;
    expect(final.indexOf('Solution:\n')).toBeLessThan(final.indexOf('First I add up'));
    expect(final.indexOf('First I add up')).toBeLessThan(final.indexOf('Great job'));
    expect(await readFile(join(root, 's0', 'homework', '0.txt'), 'utf8')).toBe(final);

    // Every turn is a sample whose prompt is rendered with the tools it listed; the evaluation
    // scores the teacher's first reply after its tool calls: comments, not a call.
    const rows = trainingSamples(records).rows.filter(homework);
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.tools?.length === 3)).toBe(true);
    const evaluations = of(records, 'evaluation');
    expect(evaluations.map((e) => e.step)).toEqual([0]);
    expect(evaluations[0].perProblem[0].detail).toMatch(/^Great job/);
    expect(evaluations[0].perProblem[0].prompt).toContain('homework/0.txt');
  }, 120_000);

  it('refuses a policy whose chat template offers no tools, saying what to choose', () => {
    const smol = '{% for message in messages %}<|im_start|>{{ message.role }}{% endfor %}';
    expect(() => checkWorkspacePolicy('HuggingFaceTB/SmolLM2-135M-Instruct', { hasChatTemplate: true, toolCallTags: usesToolCallTags(smol) })).toThrow(
      WorkspacePolicyError,
    );
    expect(() => checkWorkspacePolicy('stories260K', { hasChatTemplate: false, toolCallTags: false })).toThrow(/no chat template.*homework "chat"/);
  });
});
