/**
 * Models that ship with the app (public/models/NAME): named `bundled:NAME` in run configs, so a
 * config means the same model in the page (served from the app's own origin, no download from a
 * hub) and in Node (read from the repository's folder).
 */
export const BUNDLED_SCHEME = 'bundled:';

/** The storyteller's default policy: stories260K taught to take a hint (see its model card). */
export const DEMO_STORY_MODEL = `${BUNDLED_SCHEME}storyteller-demo`;

/** The folder name of a bundled model id, or null for any other id. */
export function bundledName(id: string): string | null {
  if (!id.startsWith(BUNDLED_SCHEME)) return null;
  const name = id.slice(BUNDLED_SCHEME.length);
  return /^[a-z0-9][a-z0-9._-]{0,63}$/.test(name) ? name : null;
}

/** Where the app serves a bundled model, relative to its base URL. */
export function bundledPath(name: string): string {
  return `models/${name}`;
}
