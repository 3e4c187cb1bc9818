/** How derived views key and read values of run records. */

/** One key per (session, turn): the records of one turn share it. */
export function turnKey(session: string, turn: number): string {
  return `${session}\u0000${turn}`;
}

/** The number when it is finite, else null (a statistic the engine could not compute). */
export function finite(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}
