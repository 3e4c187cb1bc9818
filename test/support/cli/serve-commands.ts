/**
 * Browser-test commands (Vitest's `browser.commands`, run in Node): a real `nextstate serve` in
 * a second process on the tiny fixture model, what a client sends it, and its end, so a browser
 * test can watch or drive a server as the lab does.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserCommand } from 'vitest/node';
import { spawnServe, type ServeProcess } from './spawn-serve.ts';

const servers = new Map<string, ServeProcess>();

/** Starts `nextstate serve --model MODELDIR ARGS`; resolves with its root (without /v1) once it listens. */
const startServe: BrowserCommand<[modelDir: string, args?: string[]]> = async (_ctx, modelDir, args = []) => {
  const out = join(mkdtempSync(join(tmpdir(), 'nextstate-browser-serve-')), 'run.nsrun');
  const server = await spawnServe(['--model', modelDir, '--out', out, ...args]);
  const root = server.url.replace(/\/v1$/, '');
  servers.set(root, server);
  return root;
};

/** One chat request to the server, as an agent sends it; resolves with the reply's status and text. */
const serveChat: BrowserCommand<[root: string, body: object, headers?: Record<string, string>]> = async (_ctx, root, body, headers = {}) => {
  const res = await fetch(`${root}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
};

/** Stops the server (SIGTERM, as Ctrl-C) and waits for it to exit. */
const stopServe: BrowserCommand<[root: string]> = async (_ctx, root) => {
  const server = servers.get(root);
  if (!server) return;
  servers.delete(root);
  server.child.kill('SIGTERM');
  await server.exited;
};

export const serveCommands = { startServe, serveChat, stopServe };

declare module 'vitest/browser' {
  interface BrowserCommands {
    startServe(modelDir: string, args?: string[]): Promise<string>;
    serveChat(root: string, body: object, headers?: Record<string, string>): Promise<{ status: number; text: string }>;
    stopServe(root: string): Promise<void>;
  }
}
