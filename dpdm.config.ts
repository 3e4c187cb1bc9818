// No import cycles (issue 45): `npm run check` (or `npm run cycles` alone) runs dpdm, which reads
// this file and fails when modules that src/ and bench/ reach import one another in a loop.
// Type-only imports count: TypeScript is analysed as written (transform off), so an `import type`
// loop fails as a value one does, and so does a loop through a dynamic import(). The one kind of
// import dpdm does not see, a type named through import('./module'), ESLint refuses
// (no-restricted-syntax in eslint.config.js). A cycle is broken by moving what both sides use to
// the module it belongs in (or a small new one named for it), not by allowing it here.
import { defineConfig } from 'dpdm';

export default defineConfig({
  files: ['src/**/*.ts', 'bench/**/*.ts'],
  transform: false,
  circular: true,
  tree: false,
  warning: false,
  progress: false,
  exitCode: 'circular:1',
});
