// Types of licences.mjs, for the test that imports it.
export const PERMISSIVE: string[];
export const WEAK_COPYLEFT: string[];
export interface LockedPackage {
  name: string;
  license: string | null;
  dev: boolean;
}
export function lockedPackages(lock?: unknown): LockedPackage[];
export function licenceProblems(packages?: LockedPackage[]): string[];
