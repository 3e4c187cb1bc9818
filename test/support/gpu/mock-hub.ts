/**
 * A Hugging Face hub on 127.0.0.1 for offline tests: the revision and paths-info APIs and
 * resolve/{commit}/{file} (whole or a byte range) for model folders on disk, with large files
 * redirected to a second host (the hub's CDN), as the real hub does. Every request is logged
 * with its Authorization header.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { dataPath } from '../../data-dir';

export interface HubRequest {
  host: 'hub' | 'cdn';
  method: string;
  path: string;
  authorization: string | undefined;
}

type Lie = 'huge-length' | 'endless' | 'other-bytes' | 'huge-size';

export interface MockHub {
  /** The hub's base URL, for HF_ENDPOINT. */
  url: string;
  requests: HubRequest[];
  /** Points a branch or tag of `repo` at a commit (of one added with addCommit). */
  setRef(repo: string, revision: string, commit: string): void;
  /** A commit of `repo` holding the files of `dir`; returns its id. */
  addCommit(repo: string, dir: string): string;
  /** Only requests carrying this Bearer token get the repository's files or revisions. */
  gate(repo: string, token: string): void;
  /**
   * Serves `name` of a commit as a hostile host would: whole, with a Content-Length of 1e12 or a
   * body without end or bytes other than the paths-info API states (a byte range of it stays
   * true); or a byte range saying the file is 1e12 bytes.
   */
  lie(commit: string, name: string, how: Lie): void;
  /** Sends `name` of a commit in eight parts over `ms` milliseconds, as a slow link would (a byte-0 probe stays quick). */
  slow(commit: string, name: string, ms: number): void;
  close(): Promise<void>;
}

const commitId = (repo: string, n: number) => createHash('sha1').update(`${repo}#${n}`).digest('hex');
const gitBlobId = (bytes: Uint8Array) => createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

export async function startMockHub(): Promise<MockHub> {
  const commits = new Map<string, Map<string, Uint8Array>>();
  const refs = new Map<string, string>();
  const gates = new Map<string, string>();
  const requests: HubRequest[] = [];
  let n = 0;

  const log = (host: HubRequest['host'], req: IncomingMessage) =>
    requests.push({ host, method: req.method ?? 'GET', path: req.url ?? '', authorization: req.headers.authorization });
  const lies = new Map<string, Lie>();
  const slowness = new Map<string, number>();
  const send = (req: IncomingMessage, res: ServerResponse, status: number, body: Uint8Array | string, headers: Record<string, string> = {}) => {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    res.writeHead(status, { 'content-length': String(bytes.byteLength), ...headers });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };
  /** A file's bytes, or the range a `Range: bytes=a-b` header asks for (206, as the hub and its CDN answer). */
  const sendFile = (req: IncomingMessage, res: ServerResponse, commit: string, name: string, bytes: Uint8Array, headers: Record<string, string>) => {
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const told = lies.get(`${commit}/${name}`);
    const lie = (told === 'huge-size') === Boolean(range) ? told : undefined;
    if (lie === 'huge-size') {
      res.writeHead(206, { ...headers, 'content-length': '1', 'content-range': `bytes 0-0/${1e12}` });
      return res.end('{');
    }
    if (lie === 'huge-length') {
      res.writeHead(200, { ...headers, 'content-length': String(1e12) });
      return res.end('{}');
    }
    if (lie === 'other-bytes') {
      const other = bytes.slice();
      other[other.byteLength - 1] ^= 1;
      return send(req, res, 200, other, headers);
    }
    if (lie === 'endless') {
      res.writeHead(200, headers);
      const chunk = Buffer.alloc(1 << 20, 0x20);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      return pump();
    }
    const start = range ? Number(range[1]) : 0;
    const end = range ? Math.min(range[2] ? Number(range[2]) : bytes.byteLength - 1, bytes.byteLength - 1) : bytes.byteLength - 1;
    const body = bytes.subarray(start, end + 1);
    const headed = range ? { ...headers, 'content-range': `bytes ${start}-${end}/${bytes.byteLength}` } : headers;
    const ms = slowness.get(`${commit}/${name}`);
    if (ms === undefined || body.byteLength <= 1 || req.method === 'HEAD') return send(req, res, range ? 206 : 200, body, headed);
    res.writeHead(range ? 206 : 200, { ...headed, 'content-length': String(body.byteLength) });
    const part = Math.ceil(body.byteLength / 8);
    const next = (at: number) => {
      if (at >= body.byteLength) return res.end();
      res.write(body.subarray(at, at + part));
      setTimeout(() => next(at + part), ms / 8);
    };
    next(0);
  };
  const readJson = (req: IncomingMessage) =>
    new Promise<unknown>((done) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => done(JSON.parse(text || '{}')));
    });

  const cdn = createServer((req, res) => {
    log('cdn', req);
    const [, commit, ...name] = (req.url ?? '').split('/');
    const bytes = commits.get(commit)?.get(name.join('/'));
    if (!bytes) return send(req, res, 404, 'not found');
    sendFile(req, res, commit, name.join('/'), bytes, { 'content-type': 'application/octet-stream', etag: '"cdn-etag"' });
  });
  const cdnUrl = await listen(cdn);

  const hub = createServer(async (req, res) => {
    log('hub', req);
    const path = decodeURIComponent((req.url ?? '').split('?')[0]);
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/(.+)$/.exec(path);
    const paths = req.method === 'POST' ? /^\/api\/models\/([^/]+\/[^/]+)\/paths-info\/([^/]+)$/.exec(path) : null;
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const repo = api?.[1] ?? paths?.[1] ?? resolve?.[1];
    if (repo && gates.has(repo) && req.headers.authorization !== `Bearer ${gates.get(repo)}`) return send(req, res, 401, '{"error":"gated"}');
    if (api) {
      const [, repo, rev] = api;
      const commit = refs.get(`${repo}@${rev}`) ?? (commits.has(rev) ? rev : undefined);
      if (!commit) return send(req, res, 404, '{"error":"Revision Not Found"}', { 'content-type': 'application/json' });
      return send(req, res, 200, JSON.stringify({ id: repo, sha: commit, siblings: [...commits.get(commit)!.keys()].map((rfilename) => ({ rfilename })) }), {
        'content-type': 'application/json',
      });
    }
    if (paths) {
      // What each file is at the commit: its git blob id, and an LFS file's SHA-256 (its blob's name in the cache).
      const files = commits.get(paths[2]);
      if (!files) return send(req, res, 404, '{"error":"Revision Not Found"}', { 'content-type': 'application/json' });
      const asked = ((await readJson(req)) as { paths?: string[] }).paths ?? [];
      const infos = asked.flatMap((name) => {
        const bytes = files.get(name);
        if (!bytes) return [];
        const lfs = name.endsWith('.safetensors')
          ? { lfs: { oid: createHash('sha256').update(bytes).digest('hex'), size: bytes.byteLength, pointerSize: 134 } }
          : {};
        return [
          {
            type: 'file',
            path: name,
            oid: gitBlobId(bytes),
            size: bytes.byteLength,
            ...lfs,
            lastCommit: { id: paths[2], title: 'add', date: '2026-01-01T00:00:00Z' },
          },
        ];
      });
      return send(req, res, 200, JSON.stringify(infos), { 'content-type': 'application/json' });
    }
    if (resolve) {
      const [, , commit, name] = resolve;
      const bytes = commits.get(commit)?.get(name);
      if (!bytes) return send(req, res, 404, 'Entry not found', { 'x-error-code': 'EntryNotFound' });
      if (name.endsWith('.safetensors')) {
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        res.writeHead(302, { location: `${cdnUrl}/${commit}/${name}`, 'x-linked-etag': `"${sha256}"`, 'x-repo-commit': commit });
        return res.end();
      }
      return sendFile(req, res, commit, name, bytes, { etag: `"${gitBlobId(bytes)}"`, 'x-repo-commit': commit });
    }
    send(req, res, 404, 'not found');
  });
  const url = await listen(hub);

  return {
    url,
    requests,
    setRef: (repo, revision, commit) => void refs.set(`${repo}@${revision}`, commit),
    addCommit(repo, dir) {
      const id = commitId(repo, n++);
      commits.set(
        id,
        new Map(
          readdirSync(dir, { withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => [e.name, new Uint8Array(readFileSync(join(dir, e.name)))]),
        ),
      );
      return id;
    },
    gate: (repo, token) => void gates.set(repo, token),
    lie: (commit, name, how) => void lies.set(`${commit}/${name}`, how),
    slow: (commit, name, ms) => void slowness.set(`${commit}/${name}`, ms),
    close: () =>
      Promise.all(
        [hub, cdn].map(
          (s) =>
            new Promise<void>((r) => {
              s.close(() => r());
              // An endless body a client stopped reading keeps its connection open.
              s.closeAllConnections();
            }),
        ),
      ).then(() => {}),
  };
}

/** The hub id the tests load stories260K by, as its author published it. */
export const STORIES_REPO = 'karpathy/stories260K';

/**
 * A mock hub holding stories260K as STORIES_REPO at `count` commits of the same files (main names
 * the first), for tests of what a revision loads after the branch moved.
 */
export async function startStoriesHub(count = 2): Promise<{ hub: MockHub; commits: string[] }> {
  const hub = await startMockHub();
  const commits = Array.from({ length: count }, () => hub.addCommit(STORIES_REPO, dataPath('models/stories260K')!));
  hub.setRef(STORIES_REPO, 'main', commits[0]);
  return { hub, commits };
}
