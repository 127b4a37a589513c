/**
 * URLs given on the command line (the sandbox, a receiver): checked, and shown without what may be
 * secret (credentials, query, fragment).
 */
import { UsageError } from './command-line.js';

export const SANDBOX_URL_VARIABLE = 'PAYLATER_SANDBOX_URL';
export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:4000';

/** An absolute http(s) URL, or a usage error that does not repeat the value. */
export function httpUrl(value: string, option: string, command: string, example: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${option} takes an absolute http:// or https:// URL, e.g. ${example}`, command);
  }
  return url;
}

/** The sandbox's base URL: the option, else PAYLATER_SANDBOX_URL, else http://127.0.0.1:4000. */
export function sandboxUrl(value: string | undefined, command: string): URL {
  const given = value ?? process.env[SANDBOX_URL_VARIABLE];
  const option = value === undefined && given !== undefined ? SANDBOX_URL_VARIABLE : '--sandbox';
  const url = httpUrl(given ?? DEFAULT_SANDBOX_URL, option, command, DEFAULT_SANDBOX_URL);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`${option} takes the sandbox's base URL, without credentials or a query`, command);
  }
  return url;
}

/** A URL relative to the sandbox's base URL (which may have a path prefix). */
export function sandboxEndpoint(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

/** The URL for messages: scheme, host, port and path; never credentials or the query. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}
