/**
 * The ports the e2e suite listens on. E2E_PORT moves them, so two runs on one machine (two
 * checkouts, or CI jobs side by side) do not take each other's server: the preview of the build
 * on E2E_PORT (default 4173), and the headerless static server of static-site.spec.ts on the
 * port after it.
 */
const DEFAULT_PORT = 4173;

function e2ePort(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_PORT;
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  // The next port is the static server's, so the last port of all cannot be E2E_PORT.
  if (!(port >= 1 && port <= 65534)) throw new Error(`E2E_PORT must be a port number from 1 to 65534, not "${text}"; unset it to use ${DEFAULT_PORT}.`);
  return port;
}

/** Where `vite preview` serves the built app, with the project's headers. */
export const PREVIEW_PORT = e2ePort(process.env.E2E_PORT);
/** Where static-site.spec.ts serves dist/ with no headers at all. */
export const PLAIN_PORT = PREVIEW_PORT + 1;
