/**
 * Vitest's order, with the learning claims first. Unknown files run largest first, and the
 * claims are small files of minutes of single-threaded CPU each, so on a fresh clone (no timing
 * cache) they started last and ran on after every other file had finished, leaving cores idle.
 * Started first, they run beside the short files.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONG = /[\\/]src[\\/]runtime[\\/]learning-[^\\/]+\.test\.ts$/;

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => LONG.test(f.moduleId)), ...sorted.filter((f) => !LONG.test(f.moduleId))];
  }
}
