import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { builtHeaders, staticHosting } from './src/deploy/vite-plugin.ts';

/** What the servers send and the build writes: headers.ts's, with the NEXTSTATE_CONNECT_SRC build option. */
export const securityHeaders = builtHeaders();

export default defineConfig({
  plugins: [svelte(), staticHosting()],
  // Relative URLs: the built folder works from any path on any host (a GitHub Pages project
  // site included); the app routes in the hash.
  base: './',
  worker: { format: 'es' },
  // No source maps in the build unless asked: `vite build --sourcemap`.
  build: { target: 'es2022' },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port: 4173 },
});
