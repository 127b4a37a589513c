/**
 * URLs given on the command line (the sandbox, a receiver): checked, and shown without what may be
 * secret (credentials, query, fragment).
 */
import { UsageError } from './command-line.js';

/**
 * The one variable of the service's address: the guides' servers, the code samples, the
 * example shop, `listen` and `trigger` read it.
 */
export const SANDBOX_URL_VARIABLE = 'PAYLATER_BASE_URL';
/** What `listen`, `trigger` and the example shop read in 2.0.0: still read, with a deprecation line. */
export const DEPRECATED_SANDBOX_URL_VARIABLE = 'PAYLATER_SANDBOX_URL';
export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:4000';

/** The line written when only the deprecated name is set. */
const DEPRECATION_LINE = `${DEPRECATED_SANDBOX_URL_VARIABLE} is deprecated and will be removed: set ${SANDBOX_URL_VARIABLE} instead (the same value).`;

/**
 * The base URL from the environment: `PAYLATER_BASE_URL`, else the deprecated
 * `PAYLATER_SANDBOX_URL` (and `warn` is told), else undefined. An empty value counts as unset.
 */
export function baseUrlFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  warn: (line: string) => void = (line) => void process.stderr.write(`paylater: ${line}\n`),
): { value: string; variable: string } | undefined {
  const current = env[SANDBOX_URL_VARIABLE];
  if (current !== undefined && current !== '') return { value: current, variable: SANDBOX_URL_VARIABLE };
  const old = env[DEPRECATED_SANDBOX_URL_VARIABLE];
  if (old === undefined || old === '') return undefined;
  warn(DEPRECATION_LINE);
  return { value: old, variable: DEPRECATED_SANDBOX_URL_VARIABLE };
}

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

/**
 * The sandbox's base URL: the option, else PAYLATER_BASE_URL (else the deprecated
 * PAYLATER_SANDBOX_URL, with a line on standard error), else http://127.0.0.1:4000.
 */
export function sandboxUrl(
  value: string | undefined,
  command: string,
  env: Record<string, string | undefined> = process.env,
  warn?: (line: string) => void,
): URL {
  const fromEnv = value === undefined ? baseUrlFromEnvironment(env, warn) : undefined;
  const given = value ?? fromEnv?.value;
  const option = fromEnv?.variable ?? '--sandbox';
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
