/**
 * A word as a POSIX shell reads it back: bare where it can be (so a prefix's $HOME expands), else
 * in double quotes. For the commands the docs and reports print for a person to run again.
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./$~-]+$/.test(word) ? word : `"${word.replace(/["\\`$]/g, '\\$&')}"`;
}
