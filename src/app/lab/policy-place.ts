/**
 * Where a stored run's policy ran, as the run header and the Runs list say it: a policy on a
 * server (which judged and trained it) is labelled so, since nothing of its training is here.
 */

/** The policy server a stored run's config names; null for a policy that ran in the lab. */
export function policyServerOf(config: unknown): { url: string; model: string } | null {
  const policy = (config as { models?: { policy?: { kind?: unknown; url?: unknown; model?: unknown } } } | undefined)?.models?.policy;
  if (policy?.kind !== 'server' || typeof policy.url !== 'string' || typeof policy.model !== 'string') return null;
  return { url: policy.url, model: policy.model };
}

/** The badge's words and its title. */
export function remotePolicyBadge(server: { url: string; model: string }): { text: string; title: string } {
  return {
    text: 'remote policy',
    title: `${server.model} on the server at ${server.url}, which judged and trained it; its adapter is on the server (nextstate serve's run file)`,
  };
}
