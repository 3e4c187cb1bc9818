/**
 * Failures of an OpenAI-compatible endpoint, one class per thing the person can do something
 * about. Messages name the endpoint by its URL and model, never by its key.
 */
export class EndpointError extends Error {
  override name = 'EndpointError';
  constructor(
    message: string,
    /** HTTP status when the server answered, undefined when it never did. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export class EndpointAuthError extends EndpointError {
  override name = 'EndpointAuthError';
  constructor(where: string, status: number) {
    super(`${where} refused the request with HTTP ${status}: check the API key.`, status);
  }
}

export class EndpointNotFoundError extends EndpointError {
  override name = 'EndpointNotFoundError';
  constructor(where: string, detail: string) {
    super(
      `${where} answered HTTP 404${detail ? ` (${detail})` : ''}: check base URL and model name. ` +
        'The base URL usually ends in /v1 (for example https://api.openai.com/v1 or http://127.0.0.1:8000/v1).',
      404,
    );
  }
}

export class EndpointNetworkError extends EndpointError {
  override name = 'EndpointNetworkError';
  constructor(where: string, cause: string) {
    super(
      `Could not reach ${where} (${cause}). Check that the server is running and the base URL is right; ` +
        'a server on another origin must also allow this page with CORS.',
    );
  }
}

export class EndpointTimeoutError extends EndpointError {
  override name = 'EndpointTimeoutError';
  constructor(where: string, timeoutMs: number) {
    super(
      `${where} did not answer within ${Math.round(timeoutMs / 1000)} s. ` +
        'Raise the timeout, lower max new tokens, or check that the server is not overloaded.',
    );
  }
}

export class EndpointResponseError extends EndpointError {
  override name = 'EndpointResponseError';
  constructor(where: string, problem: string) {
    super(
      `${where} sent a response that is not an OpenAI chat-completions answer (${problem}). ` +
        'Check that the base URL points at an OpenAI-compatible /v1 API.',
      200,
    );
  }
}

export class EndpointHttpError extends EndpointError {
  override name = 'EndpointHttpError';
  constructor(where: string, status: number, detail: string, attempts: number) {
    const advice =
      status === 429
        ? 'The server is rate limiting: wait, or run fewer votes or simulations at once.'
        : status >= 500
          ? 'The server failed; check its logs.'
          : 'The server refused the request as sent.';
    super(`${where} answered HTTP ${status}${detail ? `: ${detail}` : ''} ` + `(${attempts} attempt${attempts === 1 ? '' : 's'}). ${advice}`, status);
  }
}
