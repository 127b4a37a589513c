/**
 * Request paths as the sandbox's log lines show them ({@link LogPaths}), and the small path
 * helpers of routing: a path's family prefix, whether its percent-encoding decodes.
 *
 * A logged path is normalised the way a server could read it (percent-decoded, `\\` and duplicate
 * slashes, `.` and `..`) so that a route's secret segment (the dashboard invitation's `{token}`) is
 * found and redacted however the path is written.
 */
import { safeDecode } from '../contract/index.js';

/** The paths of routes with a secret in their path, and {@link logPath} over them. */
export class LogPaths {
  /** Routes with a secret in their path (a `{token}`), whose value is never logged. */
  private readonly secretRoutes: SecretRoute[] = [];

  /** Notes a registered route's path, as written in the contract (`{name}` for a parameter). */
  add(path: string): void {
    const secret = secretRoute(path);
    if (secret !== undefined) this.secretRoutes.push(secret);
  }

  /**
   * A request's path as it may be logged: without the query (which may carry anything), normalised
   * ({@link normalisedSegments}: percent-decoded, duplicate slashes collapsed, `.` and `..` resolved)
   * so that the route's secrets are found however the path is written, with every secret path
   * segment (the dashboard invitation token) replaced by `[redacted]`, also when the rest of the path
   * does not match the route exactly, and with what is not printable ASCII percent-encoded.
   */
  logPath(url: string): string {
    // The usual path (letters, digits, `-`, `_`, `~`, `.` inside segments) is its own normal form.
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const plain = PLAIN_PATH.test(path);
    // A plain path no secret route's start matches is logged as it is, without splitting it.
    if (plain && !this.secretStart(path)) return path;
    const segments = plain ? path.split('/') : normalisedSegments(url);
    let redacted = false;
    for (const route of this.secretRoutes) {
      if (segments.length <= route.last) continue;
      const matches = route.segments.every(
        (segment, index) => index > route.last || segment === undefined || segment === segments[index]!.toLowerCase(),
      );
      if (!matches) continue;
      for (const index of route.secret) segments[index] = REDACTED;
      redacted = true;
    }
    if (plain && !redacted) return path;
    return segments.map((segment) => (segment === REDACTED ? segment : printableSegment(segment))).join('/') || '/';
  }

  /** Whether a plain path matches the start of a route with a secret (a loop: no closure per request). */
  private secretStart(path: string): boolean {
    for (const route of this.secretRoutes) if (route.plain.test(path)) return true;
    return false;
  }
}

export function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** Path parameters whose values are secrets: never logged. */
const SECRET_PARAMETER = /token|secret|password|key/i;

interface SecretRoute {
  /** Each segment of the route's path: lower-case text, or undefined for a parameter. */
  segments: (string | undefined)[];
  /** The indexes of the secret segments. */
  secret: number[];
  /** The highest of them. */
  last: number;
  /**
   * Whether a plain path ({@link PLAIN_PATH}) matches the route up to its last secret segment, as
   * the segment by segment comparison would (ASCII, whatever the case).
   */
  plain: RegExp;
}

const REDACTED = '[redacted]';

/**
 * A path that {@link normalisedSegments} leaves as it is: `/` and segments of letters, digits, `-`,
 * `_`, `~` and `.` that neither start with `.` nor are empty (no `%`, `\\`, `//`, `.` or `..`).
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/;

/**
 * The segments of a request target's path as the log sees them: `['', 'sandbox', 'clock']` for
 * `/sandbox/clock`. The path is taken from an absolute-form target (`http://host/path`) too; it is
 * percent-decoded (so `%2F` separates segments as `/` does), `\\` counts as `/`, empty segments
 * (`//`) and `.` are dropped and `..` removes the segment before it.
 */
function normalisedSegments(url: string): string[] {
  let target = url;
  if (!target.startsWith('/')) {
    try {
      target = new URL(target).pathname;
    } catch {
      return [target === '*' ? '*' : '-'];
    }
  }
  const path = target.split(/[?#]/, 1)[0] ?? '/';
  const parts = path.split(/[/\\]+/);
  const segments: string[] = [''];
  for (const segment of parts.flatMap((part) => safeDecode(part).split(/[/\\]+/))) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length > 1) segments.pop();
      continue;
    }
    segments.push(segment);
  }
  if (segments.length > 1 && /[/\\]$/.test(path)) segments.push('');
  return segments;
}

/** A decoded segment for a log line: characters other than printable ASCII percent-encoded. */
function printableSegment(segment: string): string {
  return segment.replace(/[^\x21-\x7e]|%/gu, (character) => encodeURIComponent(character));
}

function secretRoute(path: string): SecretRoute | undefined {
  const parts = path.split('/');
  const secret: number[] = [];
  const segments = parts.map((part, index) => {
    const parameter = /^\{([^}]+)\}$/.exec(part);
    if (parameter === null) return part.toLowerCase();
    if (SECRET_PARAMETER.test(parameter[1]!)) secret.push(index);
    return undefined;
  });
  if (secret.length === 0) return undefined;
  const last = Math.max(...secret);
  const start = segments
    .slice(1, last + 1)
    .map((segment) => `/${segment === undefined ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)
    .join('');
  return { segments, secret, last, plain: new RegExp(`^${start}(?:/|$)`, 'i') };
}

export function prefixOf(path: string): string {
  return path.split('/').slice(0, 3).join('/');
}

/** Whether every %-escape of the path is valid and the bytes are UTF-8 (as the router decodes ids). */
export function decodablePath(pathname: string): boolean {
  if (!pathname.includes('%')) return true;
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}
