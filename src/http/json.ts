/**
 * The JSON rules of every server in the project: which Content-Type is JSON, and how a body's bytes
 * become a value (strict UTF-8, JSON syntax, a nesting limit).
 *
 * Hand-written: `content-type` (the npm package) parses the header but leaves the decision (which
 * media type, which charsets) to the caller, and `JSON.parse` has no depth limit; each rule is a few
 * lines here, written once, with the wording of its hints.
 */

/**
 * The deepest nesting of arrays and objects a JSON body may have. Deeper data (a 10 KB body can be
 * thousands of levels deep) would overflow the stack where it is validated, copied (structuredClone)
 * or serialized again, and turn a client mistake into a 500.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a Content-Type is not JSON; `undefined` when it is. */
export type ContentTypeProblem =
  | { kind: 'missing' }
  | { kind: 'media-type'; mediaType: string }
  | { kind: 'charset'; charset: string };

/**
 * The JSON Content-Type rule (why: D61): the media type `application/json` (any case), with no charset
 * or the charset UTF-8, written `utf-8` or `utf8`, quoted or not, any case; other parameters are
 * ignored.
 */
export function jsonContentTypeProblem(value: string | undefined): ContentTypeProblem | undefined {
  if (value === undefined) return { kind: 'missing' };
  // The value nearly every client sends, known to be JSON without splitting it.
  if (value === 'application/json') return undefined;
  const [type = '', ...parameters] = value.split(';');
  const mediaType = type.trim().toLowerCase();
  if (mediaType !== 'application/json') return { kind: 'media-type', mediaType };
  for (const parameter of parameters) {
    const [name = '', ...rest] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = rest.join('=').trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return { kind: 'charset', charset };
  }
  return undefined;
}

export type JsonParse =
  | { ok: true; value: unknown }
  | { ok: false; problem: 'utf-8'; message: string }
  | { ok: false; problem: 'syntax'; message: string; reason: string }
  | { ok: false; problem: 'depth'; message: string };

/** Strict UTF-8; a byte order mark is kept, so JSON.parse refuses it (RFC 8259 8.1: a sender adds none). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses a JSON body from its bytes: strict UTF-8, JSON syntax, at most {@link MAX_JSON_DEPTH}
 * levels. `message` says what is wrong without quoting the body; `reason` is JSON.parse's own
 * message, which may quote it.
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): JsonParse {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { ok: false, problem: 'utf-8', message: 'The request body is not valid UTF-8.' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'syntax error';
    return { ok: false, problem: 'syntax', message: 'The request body is not valid JSON.', reason };
  }
  if (mayNestDeeperThan(bytes, maxDepth) && nestedDeeperThan(value, maxDepth)) {
    return { ok: false, problem: 'depth', message: `The request body is nested more than ${maxDepth} levels deep.` };
  }
  return { ok: true, value };
}

/**
 * Whether the body could nest more than `limit` levels: it has more than `limit` bytes `{` or `[`
 * (each level opens with one). Most bodies have a few, and the parsed value is not walked.
 */
function mayNestDeeperThan(bytes: Uint8Array, limit: number): boolean {
  if (bytes.length <= 2 * limit) return false;
  let openings = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if ((byte === 0x7b || byte === 0x5b) && ++openings > limit) return true;
  }
  return false;
}

/** Whether arrays and objects nest more than `limit` levels (the value itself is level 1); iterative. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, level] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (level > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, level + 1]);
  }
  return false;
}
