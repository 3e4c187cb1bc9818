/**
 * The errors `nextstate serve` answers with. Each becomes one line of JSON in OpenAI's shape,
 * `{"error": {"message", "type", "code", "param"}}`, with its HTTP status, so any OpenAI client
 * shows the message as it is.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** Extra response headers (Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({ error: { message: this.message, type: this.type, code: this.code, param: this.param } });
  }
}

/** A field of the request body that breaks the schema: 400 naming it. */
export function invalidField(param: string, problem: string): ApiError {
  return new ApiError(400, `${param} ${problem}`, 'invalid_request_error', 'invalid_value', param);
}
