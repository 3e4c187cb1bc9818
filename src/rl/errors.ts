/**
 * One error class per failure of the method library, each with a message that says what to
 * do. Callers branch on the class; people read the message.
 */
export class RlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Two per-token arrays that must describe the same response have different lengths. */
export class LengthMismatchError extends RlError {
  constructor(
    readonly what: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(
      `${what}: expected ${expected} values, got ${actual}. Both arrays must cover exactly the ` +
        `response tokens of the same turn; check that prompt tokens were cut off and that the ` +
        `teacher was scored on the same response ids.`,
    );
  }
}

/** A number the method cannot use (NaN, infinite, out of range, not an integer). */
export class InvalidArgumentError extends RlError {}

/** A preset or a preset override holds a value outside what the method accepts. */
export class PresetError extends RlError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`preset field "${field}" ${problem}. Fix the override (or the run file's preset) and ` + `start the run again.`);
  }
}

/** A run-log record read from an untrusted place is not a well-formed RunRecord. */
export class RecordValidationError extends RlError {
  constructor(
    readonly where: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(
      `${where}: field "${field}" ${problem}. The run file is damaged or was written by an ` +
        `incompatible version; re-export it from the app that made it, or remove this record.`,
    );
  }
}
