import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * COOP/COEP make the page cross-origin isolated, which multi-threaded WASM in onnxruntime-web
 * needs (SharedArrayBuffer). The CSP lets models come from the Hugging Face hub and its CDN,
 * lets workers start from blob: URLs, and forbids inline scripts.
 */
const HUB = 'https://huggingface.co https://*.huggingface.co https://*.hf.co';
export const securityHeaders: Record<string, string> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self' blob:",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    // http(s): for OpenAI-compatible endpoints the user configures (local vLLM, Ollama, ...).
    `connect-src 'self' blob: data: ${HUB} https: http://localhost:* http://127.0.0.1:*`,
    "object-src 'none'",
    "base-uri 'self'",
  ].join('; '),
};

function headers(): Plugin {
  const apply = (_req: unknown, res: { setHeader(k: string, v: string): void }, next: () => void) => {
    for (const [k, v] of Object.entries(securityHeaders)) res.setHeader(k, v);
    next();
  };
  return {
    name: 'nextstate-security-headers',
    configureServer: (server) => void server.middlewares.use(apply),
    configurePreviewServer: (server) => void server.middlewares.use(apply),
  };
}

export default defineConfig({
  plugins: [svelte(), headers()],
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port: 4173 },
});
