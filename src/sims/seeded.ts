/**
 * Deterministic choices for the rule-based simulators: the same seed and inputs always give the
 * same wording, different seeds give some variety.
 */
export function hashParts(...parts: (string | number)[]): number {
  // FNV-1a, 32 bit: tiny, stable across platforms, good enough to spread choices.
  let hash = 0x811c9dc5;
  for (const char of parts.join('\u0000')) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function pick<T>(items: readonly T[], ...parts: (string | number)[]): T {
  if (items.length === 0) throw new RangeError('pick needs at least one item');
  return items[hashParts(...parts) % items.length];
}
