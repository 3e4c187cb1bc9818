/** The lab's pages and the URL hash that names one, so a reload or Back lands where it was. */

export const PAGES = ['setup', 'runs', 'run', 'system'] as const;
export type Page = (typeof PAGES)[number];

export interface Route {
  page: Page;
  /** The open run, on the Run page. */
  runId?: string;
}

/** "#/run/<id>" -> the Run page with that run; null for a hash that names no page. */
export function parseHash(hash: string): Route | null {
  const [, page, id] = /^#\/(setup|runs|run|system)(?:\/(.+))?$/.exec(hash) ?? [];
  if (!page) return null;
  return page === 'run' && id ? { page, runId: decodeURIComponent(id) } : { page: page as Page };
}

/** The hash of a page; the Run page names its run when one is open. */
export function hashFor(page: Page, openRunId: string | null | undefined): string {
  return page === 'run' && openRunId ? `#/run/${encodeURIComponent(openRunId)}` : `#/${page}`;
}
