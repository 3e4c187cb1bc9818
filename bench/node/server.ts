/**
 * The bench page's server: Vite with the app's own config (so the page gets the app's COOP/COEP
 * and CSP headers, and onnxruntime-web its cross-origin isolation for threads), rooted at
 * bench/page, plus one route that serves model folders and onnxruntime-web's dist byte for byte.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import { FILES_ROUTE, ORT_KEY } from '../page/protocol';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
};

/** onnxruntime-web's dist folder, found from its entry point (its exports hide package.json). */
export function ortDist(): string {
  return dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
}

/**
 * GET and HEAD of `${FILES_ROUTE}<key>/<file>` from folders[key]. Answered here rather than
 * through Vite's /@fs/ so that .mjs files arrive untransformed and a missing file is a plain 404
 * (the engine's HubSource and transformers.js both probe for optional files).
 */
function filesRoute(folders: Record<string, string>): Plugin {
  return {
    name: 'bench-files',
    configureServer(server) {
      server.middlewares.use(FILES_ROUTE, (req, res, next) => {
        const [key, ...rest] = decodeURIComponent((req.url ?? '').split('?')[0])
          .replace(/^\/+/, '')
          .split('/');
        const root = folders[key];
        if (!root) return next();
        const file = normalize(join(root, ...rest));
        if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
          res.statusCode = 404;
          return res.end();
        }
        res.setHeader('Content-Type', TYPES[extname(file)] ?? 'application/octet-stream');
        res.setHeader('Content-Length', statSync(file).size);
        if (req.method === 'HEAD') return res.end();
        createReadStream(file).pipe(res);
      });
    },
  };
}

export async function startServer(models: Record<string, string>): Promise<{ url: string; server: ViteDevServer }> {
  const folders = { ...models, [ORT_KEY]: ortDist() };
  const server = await createServer({
    configFile: join(repoRoot, 'vite.config.ts'),
    root: join(repoRoot, 'bench/page'),
    // Its own cache: the app's dev server may be running on node_modules/.vite meanwhile.
    cacheDir: join(repoRoot, 'node_modules/.vite-bench'),
    logLevel: 'warn',
    clearScreen: false,
    plugins: [filesRoute(folders)],
    // Discovered mid-run, a dependency makes Vite reload the page and lose the run.
    optimizeDeps: { include: ['@huggingface/transformers'], entries: ['index.html'] },
    server: { port: 5190, strictPort: false, fs: { allow: [repoRoot] }, hmr: false },
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error('the bench server did not report a URL');
  return { url, server };
}
