/**
 * How a webhook URL is shown in banners, log lines and the deliveries list (docs/webhooks.md,
 * "Matching a shown webhook URL"): its scheme, host and port, and a fingerprint in place of the path
 * and query, where a receiver's token often is:
 *
 *   http://127.0.0.1:9000/... (sha256:3f2a9c1b)
 *
 * The fingerprint is the first 8 hex digits of the SHA-256 of the URL exactly as it was given (its
 * UTF-8 bytes), so that whoever holds the URL can tell which one it is
 * (`printf '%s' "$URL" | sha256sum | cut -c1-8`) and nobody else learns the path. Credentials
 * (`user:password@`) are never shown.
 */
import { createHash } from 'node:crypto';

/** The first 8 hex digits of the SHA-256 of `url` as given. */
export function urlFingerprint(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 8);
}

/** `http://host:port/... (sha256:xxxxxxxx)`; `(none)` without a URL; `(invalid URL) (sha256:...)` for one that is not a URL. */
export function shownWebhookUrl(url: string | null | undefined): string {
  if (url === null || url === undefined) return '(none)';
  const fingerprint = `(sha256:${urlFingerprint(url)})`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `(invalid URL) ${fingerprint}`;
  }
  // `origin` has no credentials; it is "null" for a scheme other than http(s) and a few others.
  const origin = parsed.origin === 'null' ? `${parsed.protocol}//${parsed.host}` : parsed.origin;
  return `${origin}/... ${fingerprint}`;
}
