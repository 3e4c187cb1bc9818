// Lint and layering for the whole tree; `npm run check` runs it, so CI does.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';

/**
 * The stack, top to bottom: app and cli -> server (nextstate serve's HTTP server) -> workers (the
 * worker entry points and their clients) -> runtime (the run loop, on the page and in Node) ->
 * sims and storage -> generators (the text sources that play judge, user and evaluator) -> gpu
 * (the engine) -> models (model files and where they come from) -> rl (the method) -> base (the
 * utilities every layer may use). A folder imports only folders below it; base imports nothing,
 * and nothing imports app. Each entry names the folders a layer may not reach.
 */
const LAYERS = [
  { files: ['src/base/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'sims', 'storage', 'generators', 'gpu', 'models', 'rl', 'demo', 'deploy'] },
  { files: ['src/rl/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'sims', 'storage', 'generators', 'gpu', 'models', 'demo', 'deploy'] },
  { files: ['src/models/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'sims', 'storage', 'generators', 'gpu', 'demo', 'deploy'] },
  { files: ['src/gpu/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'sims', 'storage', 'generators', 'demo', 'deploy'] },
  { files: ['src/generators/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'sims', 'storage', 'demo', 'deploy'] },
  { files: ['src/sims/**', 'src/storage/**'], forbid: ['app', 'cli', 'server', 'workers', 'runtime', 'demo', 'deploy'] },
  { files: ['src/runtime/**'], forbid: ['app', 'cli', 'server', 'workers', 'demo', 'deploy'] },
  { files: ['src/workers/**'], forbid: ['app', 'cli', 'server', 'demo', 'deploy'] },
  { files: ['src/server/**'], forbid: ['app', 'cli', 'demo', 'deploy'] },
  { files: ['src/cli/**', 'src/demo/**', 'src/deploy/**'], forbid: ['app'] },
];

// A specifier that climbs out of its folder and into `dir` reaches the top-level src/<dir>; a
// nested name such as gpu's webgpu/runtime is not the runtime layer.
const layerRules = LAYERS.map(({ files, forbid }) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbid.map((dir) => ({
          regex: `^(\\.\\./)+${dir}(/|$)`,
          message: `${files[0].split('/')[1]} sits below ${dir} in the stack (eslint.config.js LAYERS): move the shared code down, or pass it in.`,
        })),
      },
    ],
  },
}));

export default ts.config(
  {
    ignores: [
      'dist/',
      'dist-cli/',
      'node_modules/',
      'public/',
      'e2e/artifacts/',
      'bench/results/',
      'device-bundle/',
      'scratch/',
      '.cache/',
      'test-results/',
      'playwright-report/',
      // AssemblyScript (scripts/build-wasm.mjs compiles it): TypeScript's syntax, not its types.
      'src/gpu/cpu-fast/assembly/',
    ],
  },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: {
      globals: { ...globals.browser, ...globals.node, ...globals.worker },
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    rules: {
      // A leading underscore marks a name kept on purpose: a field destructured away, an unused callback argument.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // MathML needs literal braces and some text needs its edge spaces: both are written {'…'}.
      'svelte/no-useless-mustaches': 'off',
      // A type named through import('./module') is an import the cycle check (dpdm.config.ts) does
      // not see: name it with `import type` at the top instead.
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSImportType[source.value=/^\\./]',
          message: "Import the type with `import type` at the top: the import-cycle check (dpdm) does not see import('…') types.",
        },
      ],
    },
  },
  {
    // Tests build malformed values on purpose (a config with a wrong field type).
    files: ['**/*.test.ts', 'e2e/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // These files exist to find control characters (terminal escapes, raw JSON strings).
    files: ['src/cli/terminal.ts', 'src/cli/hostile.test.ts', 'src/base/json-scan.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  ...layerRules,
  {
    // The method library is pure: nothing outside itself but base, no Node or browser module.
    files: ['src/rl/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^(?!\\./|\\.\\./base/)', message: 'src/rl imports nothing outside itself but src/base: it stays pure and browser-free.' }],
        },
      ],
    },
  },
  {
    // The base room is pure too, and below everything: nothing outside itself.
    files: ['src/base/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', message: 'src/base imports nothing outside itself: it stays pure and browser-free.' }] },
      ],
    },
  },
);
