/**
 * What the request log (request-log.ts) shows of a request and its answer, with the secrets taken
 * out as the sandbox's log lines and lists take them out:
 *
 * - headers: `Authorization`, `Cookie`, `Set-Cookie`, `Proxy-Authorization` and any header named
 *   like a secret (`*token*`, `*secret*`, `*password*`, `*key*`, but `X-Request-Id` and the
 *   signature, which is not a key) are `[redacted]`; a Basic or Bearer scheme is kept
 *   (`Basic [redacted]`), so a reader sees which kind of credentials was sent;
 * - the path: as the log line writes it (`Router.logPath`: the invitation token `[redacted]`);
 *   the query: each parameter named like a secret `[redacted]`;
 * - JSON bodies, walked: a member named like a secret (`password`, `privateKey`, `token`, ...) is
 *   `[redacted]`; a webhook URL (`webhookUrl`, `defaultWebhookUrl`, `webhook_url`) is shown as its
 *   origin and fingerprint (shown-url.ts); any other absolute URL loses its `user:password@`
 *   and, when it points at a route with a secret in its path (the dashboard login URL), that
 *   segment;
 * - a body that is not JSON, or cut at the log's size limit, is redacted as text: the same members
 *   by pattern, and credentials in URLs.
 *
 * Redaction runs when an entry is read, not when a request is logged: the log keeps what was sent
 * (in this process's memory, like the records themselves), and costs the request nothing more.
 */
import { isObject } from '../contract/index.js';
import { shownWebhookUrl } from './shown-url.js';

const REDACTED = '[redacted]';

/** Names of members, headers and query parameters whose values are secrets. */
const SECRET_NAME = /password|secret|token|key$|credential|authorization|cookie/i;
/** Headers named like a secret that are not: the request id, the request's signature. */
const PUBLIC_HEADERS = new Set(['x-request-id', 'x-signature']);
/** Members holding a webhook URL, whose path and query may carry the receiver's token. */
const WEBHOOK_URL_NAME = /webhook_?url/i;

/** Shows a path as the log line does (the router's `logPath`). */
export type PathRedactor = (path: string) => string;

/** The value of a header as shown: secrets redacted, a credentials scheme kept. */
function shownHeader(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (PUBLIC_HEADERS.has(lower) || !SECRET_NAME.test(lower)) return value;
  const scheme = /^(Basic|Bearer|Digest)\s/i.exec(value.trim());
  return scheme === null ? REDACTED : `${scheme[1]} ${REDACTED}`;
}

/** Every header of a request as shown, in the order received (`rawHeaders`: name, value, ...). */
export function shownHeaders(rawHeaders: readonly string[]): [string, string][] {
  const shown: [string, string][] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    shown.push([rawHeaders[index]!, shownHeader(rawHeaders[index]!, rawHeaders[index + 1]!)]);
  }
  return shown;
}

/** A request target as shown: the path as the log writes it, the query with its secrets redacted. */
export function shownTarget(url: string, logPath: PathRedactor): string {
  const index = url.indexOf('?');
  const path = logPath(index < 0 ? url : url.slice(0, index));
  if (index < 0) return path;
  const query = new URLSearchParams(url.slice(index + 1));
  for (const [name] of query) if (SECRET_NAME.test(name)) query.set(name, REDACTED);
  return `${path}?${query.toString()}`;
}

/** A URL found in a body: without credentials, its secret path segments redacted. */
function shownUrl(value: string, logPath: PathRedactor): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return value;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return value;
  const target = shownTarget(`${parsed.pathname}${parsed.search}`, logPath);
  return `${parsed.origin}${target}${parsed.hash}`;
}

function redactValue(value: unknown, name: string | undefined, logPath: PathRedactor, depth: number): unknown {
  if (name !== undefined && SECRET_NAME.test(name) && value !== null && typeof value !== 'object') return REDACTED;
  if (typeof value === 'string') {
    if (name !== undefined && WEBHOOK_URL_NAME.test(name)) return shownWebhookUrl(value);
    return /^https?:\/\//i.test(value) ? shownUrl(value, logPath) : value;
  }
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, undefined, logPath, depth + 1));
  const shown: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    shown[key] = name !== undefined && SECRET_NAME.test(name) ? REDACTED : redactValue(member, key, logPath, depth + 1);
  }
  return shown;
}

/** A JSON value with its secrets redacted (see the module's header). */
function redactJson(value: unknown, logPath: PathRedactor): unknown {
  return redactValue(value, undefined, logPath, 0);
}

/** `"password":"..."` and the like in JSON text, and `user:password@` in URLs. */
const SECRET_MEMBER_TEXT = /("(?:[^"\\]*(?:password|secret|token|credential|authorization)[^"\\]*|[^"\\]*key)"\s*:\s*)"(?:[^"\\]|\\.)*("|$)/gi;
const WEBHOOK_MEMBER_TEXT = /("[^"\\]*webhook_?url[^"\\]*"\s*:\s*)"((?:[^"\\]|\\.)*)("|$)/gi;
const URL_CREDENTIALS = /(https?:\/\/)[^/\s"@]+@/gi;

/**
 * A body as shown: `text` is the body (or its start, when `complete` is false). JSON that is
 * complete is parsed and walked; anything else is redacted by pattern.
 */
export function redactBodyText(text: string, complete: boolean, logPath: PathRedactor): string {
  if (complete && text.length > 0) {
    try {
      return JSON.stringify(redactJson(JSON.parse(text), logPath), null, 2);
    } catch {
      // Not JSON: redacted as text below.
    }
  }
  return text
    .replace(SECRET_MEMBER_TEXT, (_match, member: string, close: string) => `${member}"${REDACTED}${close}`)
    .replace(WEBHOOK_MEMBER_TEXT, (_match, member: string, url: string, close: string) => `${member}"${shownWebhookUrl(url)}${close}`)
    .replace(URL_CREDENTIALS, `$1${REDACTED}@`);
}

/** Whether a reply body is a JSON object (as sent by the router). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return isObject(value) && !Buffer.isBuffer(value);
}
