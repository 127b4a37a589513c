/**
 * What every client of this package shares: the options, the timeout, opt-in retries of requests
 * that are safe to repeat, and the two authentication middlewares (HTTP Basic and request signing).
 *
 * Nothing here imports node: modules, so the Basic-auth clients can be bundled for a browser.
 */
import createClient, { type Client } from 'openapi-fetch';

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

/** What a retry decision sees of a request. */
export interface OutgoingRequest {
  method: string;
  url: string;
  /** The exact body bytes, or `undefined` for none. */
  body: Uint8Array | undefined;
}

/** Decides whether a request may be sent again without risk of doing something twice. */
export type SafeToRepeat = (request: OutgoingRequest) => boolean;

/** GET and HEAD never change anything. */
export const readOnly: SafeToRepeat = (request) => request.method === 'GET' || request.method === 'HEAD';

/** Computes the signature headers of a request from its exact body bytes and path and query. */
export type Signer = (body: Uint8Array, pathAndQuery: string) => Record<string, string>;

/** How a client authenticates: fixed headers (HTTP Basic), a signature, or both. */
export interface Authentication {
  headers?: Record<string, string>;
  sign?: Signer;
}

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const EMPTY = new Uint8Array(0);

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
 * The fetch that every client hands to openapi-fetch. It reads the body of the request openapi-fetch
 * built once, adds the authentication headers and the signature computed over exactly those bytes
 * and the exact path and query, and sends them: with a time limit per attempt (until the response
 * headers arrive), and, when `retry` is set, again for a safe request after a network error, a
 * timeout, or HTTP 429/500/502/503/504.
 */
export function createTransport(options: ClientOptions, safeToRepeat: SafeToRepeat, auth: Authentication = {}): (request: Request) => Promise<Response> {
  checkOptions(options);
  const custom = options.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const fixed = { ...options.headers, ...auth.headers };

  async function attempt(url: string, init: RequestInit, outer: AbortSignal): Promise<Response> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const forward = () => controller.abort(outer.reason);
    outer.addEventListener('abort', forward, { once: true });
    try {
      const sent = { ...init, signal: controller.signal };
      return await (custom ? custom(new Request(url, sent)) : fetch(url, sent));
    } catch (error) {
      if (timedOut) throw new RequestTimeoutError(init.method ?? 'GET', url, timeoutMs);
      throw error;
    } finally {
      clearTimeout(timer);
      outer.removeEventListener('abort', forward);
    }
  }

  return async (request) => {
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    const headers = request.headers;
    for (const name in fixed) headers.set(name, fixed[name] as string);
    if (auth.sign) {
      const url = new URL(request.url);
      const signed = auth.sign(body ?? EMPTY, `${url.pathname}${url.search}`);
      for (const name in signed) headers.set(name, signed[name] as string);
    }
    const init: RequestInit = { method: request.method, headers, body };
    const retry = options.retry;
    if (retry === undefined || !safeToRepeat({ method: request.method, url: request.url, body })) {
      return attempt(request.url, init, request.signal);
    }
    for (let n = 0; ; n++) {
      const last = n >= retry.retries;
      let response: Response | undefined;
      try {
        response = await attempt(request.url, init, request.signal);
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

/** The `Authorization` header of HTTP Basic credentials, after checking them. */
export function basicAuth(credentials: BasicCredentials, what: string): Authentication {
  const { username, password } = credentials ?? ({} as BasicCredentials);
  if (typeof username !== 'string' || username === '' || username.includes(':')) {
    throw new TypeError(`${what}: username must be a non-empty string without ':'`);
  }
  if (typeof password !== 'string' || password === '') {
    throw new TypeError(`${what}: password must be a non-empty string`);
  }
  return { headers: { Authorization: `Basic ${base64Utf8(`${username}:${password}`)}` } };
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
 * Assembles a client: openapi-fetch builds the request from the generated types; the transport
 * authenticates and sends it. No middleware is involved, so nothing can change the request after
 * it was signed.
 */
export function buildClient<Paths extends {}>(options: ClientOptions, safeToRepeat: SafeToRepeat, auth: Authentication): Client<Paths> {
  return createClient<Paths>({ baseUrl: options.baseUrl, fetch: createTransport(options, safeToRepeat, auth) });
}
