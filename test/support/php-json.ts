/**
 * The JSON bytes other languages' encoders write, so that a test can send a body exactly as an
 * integration in that language sends it (and sign exactly those bytes).
 *
 * - `php`: PHP's `json_encode($value)` with the default flags (PHP 7.1 and later, where
 *   `serialize_precision` is -1): `/` is escaped as `\/`, every character outside ASCII as a
 *   `\uXXXX` escape of its UTF-16 code units (lowercase hex), whole floats without a fraction
 *   (`1998.0` is written `1998`), the rest as JavaScript's `JSON.stringify` writes it. Checked
 *   against PHP 8.2 (test/compat/replayer.test.ts keeps the vectors).
 * - `javascript`: `JSON.stringify(value)`, as node-fetch and browsers send it.
 *
 * Hand-written because no library produces PHP's escaping: it is a post-processing of
 * `JSON.stringify`'s output, which escapes nothing outside strings that PHP would escape.
 *
 * Key order: JavaScript orders object keys that look like array indexes ("41") before the others,
 * PHP keeps the insertion order. Data meant for `php` keeps such keys in objects of their own (as
 * PHP's order item lists are).
 */

export type JsonEncoding = 'php' | 'javascript';

/** PHP's `json_encode` with the default flags. */
export function phpJsonEncode(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('phpJsonEncode: the value has no JSON form');
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    const code = text.charCodeAt(i);
    if (ch === '/') out += '\\/';
    else if (code >= 0x80) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** The body bytes of `value` as the named encoder writes them. */
export function encodeJson(value: unknown, encoding: JsonEncoding): Buffer {
  if (encoding === 'php') return Buffer.from(phpJsonEncode(value), 'utf8');
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('encodeJson: the value has no JSON form');
  return Buffer.from(text, 'utf8');
}
