/** A reactive (deeply proxied) copy of `init`, for tests and callers without runes of their own. */
export function reactive<T extends object>(init: T): T {
  const s = $state(init);
  return s;
}
