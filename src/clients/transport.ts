/**
 * What every client of this package shares: the options, the timeout, opt-in retries of requests
 * that are safe to repeat, and the two authentication middlewares (HTTP Basic and request signing).
 *
 * Nothing here imports node: modules, so the Basic-auth clients can be bundled for a browser.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';

/** Opt-in retries. Only requests that are safe to repeat are ever retried. */
export interface RetryOptions {
  /** How many times to try again after the first attempt (1 to 10). */
  retries: number;
  /** The first back-off delay; each later one doubles, with full jitter. Default 200 ms. */
  minDelayMs?: number;
  /** The longest back-off delay, also the cap on a `Retry-After` answer. Default 5000 ms. */
  maxDelayMs?: number;
}

/** Options that every client takes. */
export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:4000` or `https://host/prefix`. */
  baseUrl: string;
  /** A fetch implementation; defaults to the global `fetch`. */
  fetch?: (input: Request) => Promise<Response>;
  /** Time limit of each attempt, in milliseconds. Default 30000. */
  timeoutMs?: number;
  /** Retries for requests that are safe to repeat; off by default. */
  retry?: RetryOptions;
  /** Extra headers sent with every request (for example a tracing header). */
  headers?: Record<string, string>;
}

/** Thrown (by the client call) when an attempt exceeds `timeoutMs`. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url} did not answer within ${timeoutMs} ms`);
  }
}

/** Decides whether a request may be sent again without risk of doing something twice. */
export type SafeToRepeat = (request: Request) => boolean | Promise<boolean>;

/** GET and HEAD never change anything. */
export const readOnly: SafeToRepeat = (request) => request.method === 'GET' || request.method === 'HEAD';

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);

function checkOptions(options: ClientOptions): void {
  if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('baseUrl must be an absolute http(s) URL');
  }
  if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
    throw new TypeError('timeoutMs must be a positive number of milliseconds');
  }
  const retry = options.retry;
  if (retry !== undefined && !(Number.isInteger(retry.retries) && retry.retries >= 1 && retry.retries <= 10)) {
    throw new TypeError('retry.retries must be an integer from 1 to 10');
  }
}

function delayFor(attempt: number, retry: RetryOptions, response: Response | undefined): number {
  const min = retry.minDelayMs ?? 200;
  const max = retry.maxDelayMs ?? 5000;
  const header = response?.headers.get('retry-after');
  const seconds = header !== null && header !== undefined ? Number(header) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, max);
  return Math.random() * Math.min(max, min * 2 ** attempt);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Wraps fetch with the per-attempt timeout and, when `retry` is set, retries of safe requests on a
 * network error, a timeout, or HTTP 429/500/502/503/504.
 */
export function createTransport(options: ClientOptions, safeToRepeat: SafeToRepeat): (request: Request) => Promise<Response> {
  checkOptions(options);
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function attempt(request: Request): Promise<Response> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    try {
      return await baseFetch(new Request(request, { signal }));
    } catch (error) {
      if (timeout.aborted && !request.signal.aborted) throw new RequestTimeoutError(request.method, request.url, timeoutMs);
      throw error;
    }
  }

  return async (request) => {
    const retry = options.retry;
    if (retry === undefined || !(await safeToRepeat(request.clone()))) return attempt(request);
    for (let n = 0; ; n++) {
      const last = n >= retry.retries;
      let response: Response | undefined;
      try {
        response = await attempt(last ? request : request.clone());
      } catch (error) {
        if (last || request.signal.aborted) throw error;
      }
      if (response !== undefined && (last || !RETRY_STATUSES.has(response.status))) return response;
      if (response !== undefined) await response.body?.cancel();
      await sleep(delayFor(n, retry, response));
    }
  };
}

function base64Utf8(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** HTTP Basic credentials. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/** A middleware that sends HTTP Basic credentials with every request. */
export function basicAuth(credentials: BasicCredentials, what: string): Middleware {
  const { username, password } = credentials ?? ({} as BasicCredentials);
  if (typeof username !== 'string' || username === '' || username.includes(':')) {
    throw new TypeError(`${what}: username must be a non-empty string without ':'`);
  }
  if (typeof password !== 'string' || password === '') {
    throw new TypeError(`${what}: password must be a non-empty string`);
  }
  const header = `Basic ${base64Utf8(`${username}:${password}`)}`;
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', header);
      return request;
    },
  };
}

/** Removes a header parameter from every operation's type, for headers a middleware sets itself. */
type WithoutHeader<Operation, Name extends string> = Operation extends { parameters: { header: infer Header } }
  ? Omit<Operation, 'parameters'> & {
      parameters: Omit<Operation['parameters'], 'header'> & { header?: Omit<Header, Name> };
    }
  : Operation;

/** The `paths` of a document with the `X-Signature` header parameter left to the client. */
export type SignedPaths<Paths, Name extends string = 'X-Signature'> = {
  [Path in keyof Paths]: { [Method in keyof Paths[Path]]: WithoutHeader<Paths[Path][Method], Name> };
};

/**
 * A middleware that signs each request as the last step before it is sent: `sign` receives the
 * exact body bytes and the path and query exactly as they will be sent.
 */
export function signing(headers: (body: Uint8Array, pathAndQuery: string) => Record<string, string>): Middleware {
  return {
    async onRequest({ request }) {
      const body = new Uint8Array(await request.clone().arrayBuffer());
      const url = new URL(request.url);
      for (const [name, value] of Object.entries(headers(body, `${url.pathname}${url.search}`))) {
        request.headers.set(name, value);
      }
      return request;
    },
  };
}

/** Extra headers sent with every request. */
export function staticHeaders(headers: Record<string, string> | undefined): Middleware | undefined {
  if (headers === undefined || Object.keys(headers).length === 0) return undefined;
  return {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
      return request;
    },
  };
}

/**
 * Assembles a client: openapi-fetch over the transport, the extra headers, then the authentication
 * middleware last, so that a signature covers the request exactly as it is sent.
 */
export function buildClient<Paths extends {}>(options: ClientOptions, safeToRepeat: SafeToRepeat, auth: Middleware): Client<Paths> {
  const client = createClient<Paths>({ baseUrl: options.baseUrl, fetch: createTransport(options, safeToRepeat) });
  const extra = staticHeaders(options.headers);
  if (extra) client.use(extra);
  client.use(auth);
  return client;
}
