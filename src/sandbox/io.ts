/**
 * The sandbox's side of HTTP, under the router: request ids, the raw request handlers see,
 * the body with its limit and the 413, the JSON body with the family's error replies, query
 * strings, and sending a reply. The rules themselves (limit, Content-Type, depth) are
 * `src/http/`'s; this module words their answers in the family's error format.
 */
import { randomFillSync } from 'node:crypto';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { isObject, safeDecode } from '../contract/index.js';
import { bufferedBody, discardBody, readBody, type BodyRead } from '../http/body.js';
import { jsonContentTypeProblem, MAX_JSON_DEPTH, parseJsonBody } from '../http/json.js';
import { sendBody } from '../http/send.js';
import type { ErrorHelpers, ErrorReply } from './errors.js';
import type { IncomingRequest, Reply } from './route-types.js';
import type { ValidationIssue } from './validation.js';

// ---------------------------------------------------------------------------------------------
// Request ids

/** A request id the client may choose: the `RequestId` schema of the contract. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const requestIds = new WeakMap<ServerResponse, string>();

/** The random bytes of one id, and how many ids one fill of the pool serves. */
const ID_BYTES = 12;
const IDS_PER_FILL = 256;
const idPool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
let idOffset = idPool.length;

/**
 * A new request id: `req_` and 24 hex digits, 96 bits from the system's CSPRNG. The bytes come from
 * a pool filled for 256 ids at a time: a `randomBytes(12)` per request was a twelfth of the
 * time of the cheapest request.
 */
export function newRequestId(): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = `req_${idPool.toString('hex', idOffset, idOffset + ID_BYTES)}`;
  idOffset += ID_BYTES;
  return id;
}

/**
 * An error answer written as raw HTTP/1.1 on a connection that Node's HTTP server no longer (or
 * never) parses: a request it could not read, a relayed request whose writer is gone, a CONNECT.
 * The body is `reply`'s, with `requestId`; the connection is closed after it. `HEAD` gets no body.
 */
export function rawErrorAnswer(reason: string, reply: ErrorReply, requestId: string, method?: string): string {
  const body = JSON.stringify({ ...reply.body, requestId });
  const headers = Object.entries(reply.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${reply.status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Cache-Control: no-store\r\n${headers}X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${method === 'HEAD' ? '' : body}`
  );
}

/**
 * Gives the request its id (once): the client's `X-Request-Id` when it is one short safe token,
 * else a new one. Returns the id (the same on every call). {@link send} writes it in the
 * `X-Request-Id` header of the answer; a handler that writes its answer itself sets the header.
 */
export function assignRequestId(request: IncomingMessage, response: ServerResponse): string {
  const kept = response instanceof KeptAnswer;
  const existing = kept ? response.requestId : requestIds.get(response);
  if (existing !== undefined) return existing;
  const offered = request.headers['x-request-id'];
  const id = typeof offered === 'string' && REQUEST_ID_PATTERN.test(offered) ? offered : newRequestId();
  if (kept) response.requestId = id;
  else requestIds.set(response, id);
  return id;
}

// ---------------------------------------------------------------------------------------------
// Sending

/**
 * Writes a reply with the request's id in `X-Request-Id`: JSON unless `Content-Type` is set and the
 * body is a string or bytes. A JSON error body (status 400 or more) gets the id as `requestId`.
 */
export function send(response: ServerResponse, reply: Reply): void {
  if (response.headersSent || response.destroyed) return;
  const requestId = assignRequestId(response.req, response);
  const body = reply.status >= 400 && isObject(reply.body) && !Buffer.isBuffer(reply.body) ? { ...reply.body, requestId } : reply.body;
  const sent = sendBody(response, reply.status, body, reply.headers, { name: 'X-Request-Id', value: requestId });
  if (typeof sent === 'string' && response instanceof KeptAnswer) response.sentText = sent;
}

/**
 * An answer that keeps what the pipeline learns of its request on itself: the text it sent, so that
 * the request log records the JSON as sent rather than serialising the reply a second time; its
 * request id; and the router's facts for the request log. The sandbox's server answers with these.
 * Fields rather than a `WeakMap` per kind of fact: thousands of short-lived WeakMap keys a second
 * are each an ephemeron for the garbage collector to trace, and a field costs nothing to drop.
 */
export class KeptAnswer extends ServerResponse {
  /** The body as sent when it was text (JSON or a page); undefined before, or for bytes. */
  sentText: string | undefined = undefined;
  /** The request's id, once {@link assignRequestId} gave it one. */
  requestId: string | undefined = undefined;
  /**
   * What the router learnt of the request (its `RouteFacts`), for the request log (request-log.ts,
   * which alone writes and reads it); undefined until it is told. Typed here without the router's
   * type, which would make io.ts and router.ts import each other.
   */
  facts: object | undefined = undefined;
}

/** Sends a reply without reading the body, which is thrown away; the connection closes after it when `close`. */
export function sendWithoutBody(request: IncomingMessage, response: ServerResponse, reply: Reply, close = false): void {
  discardBody(request);
  send(response, close ? { ...reply, headers: { ...reply.headers, Connection: 'close' } } : reply);
}

// ---------------------------------------------------------------------------------------------
// Receiving

const EMPTY = Buffer.alloc(0);

/**
 * Whether the request has a body to read: a `Transfer-Encoding`, or a `Content-Length` other than
 * 0. Without either, a request's body is empty (RFC 9112 6.3), and Node's parser reads none.
 */
function declaresBody(request: IncomingMessage): boolean {
  const { headers } = request;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * The body with the limit: the bytes, or, when it must be read, the read's promise, whose failure
 * the caller answers with {@link refuseBody}. Without `wanted` no body is read (and what comes is
 * thrown away). A request that declares no body is answered at once, without waiting for the
 * stream's end (no promise, no listener); so is one whose body the parser already holds (a
 * pipelined request taken in its turn).
 */
export function receiveBody(
  request: IncomingMessage,
  limit: number,
  wanted: boolean,
): Buffer | Promise<BodyRead> {
  if (!declaresBody(request)) return EMPTY;
  if (!wanted) {
    discardBody(request);
    return EMPTY;
  }
  const buffered = bufferedBody(request, limit);
  if (buffered !== undefined) return buffered;
  return readBody(request, limit);
}

/**
 * The answer to a body {@link receiveBody} could not read: 413 for one over the limit, the
 * connection cut when the client went away (nobody is left to answer).
 */
export function refuseBody(request: IncomingMessage, response: ServerResponse, errors: ErrorHelpers, limit: number, reason: 'too-large' | 'aborted'): undefined {
  if (reason === 'too-large') sendWithoutBody(request, response, errors.payloadTooLarge(limit), true);
  else response.destroy();
  return undefined;
}

/** `IncomingRequest.header`: one function for every request, reading the request's own `headers`. */
function header(this: IncomingRequest, name: string): string | undefined {
  const value = this.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The request as handlers see it before parsing; `method` upper case, `pathname` the url without its query. */
export function incomingRequest(request: IncomingMessage, rawBody: Buffer, method: string, url: string, pathname: string): IncomingRequest {
  return { method, url, pathname, headers: request.headers, rawBody, header };
}

/**
 * Headers no operation can work with, answered 400 before anything else: no `Host` on HTTP/1.1
 * (Node's own answer would be an empty 400), and `Host` or `Authorization` given more than once
 * (Node would silently keep the first).
 */
export function malformedHeaders(request: IncomingMessage, errors: ErrorHelpers): ErrorReply | undefined {
  if (request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor >= 1) {
    return errors.badRequest('The request has no Host header; HTTP/1.1 requires one (the address of the sandbox, e.g. Host: 127.0.0.1:4000).', [
      { field: 'Host', issue: 'is required' },
    ]);
  }
  // Node keeps the first Host (and Authorization) of several; a proxy or cache in front may have
  // used another one. Counted over the raw lines (Node's `headersDistinct` builds a copy of every header).
  let hosts = 0;
  let authorizations = 0;
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    // The usual spellings first: `toLowerCase` makes a new string for every header it is asked of.
    if (name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host')) hosts++;
    else if (name.length === 13 && (name === 'Authorization' || name === 'authorization' || name.toLowerCase() === 'authorization')) authorizations++;
  }
  if (hosts > 1) {
    return errors.badRequest(`The request has ${hosts} Host headers; send exactly one.`, [{ field: 'Host', issue: 'must be given exactly once' }]);
  }
  if (authorizations > 1) {
    return errors.badRequest(`The request has ${authorizations} Authorization headers; send exactly one.`, [
      { field: 'Authorization', issue: 'must be given exactly once' },
    ]);
  }
  return undefined;
}

export type Parsed = { ok: true; value: unknown } | { ok: false; reply: ErrorReply };

/** The JSON body by `src/http/json.ts`'s rules, its problems answered 400 in the family's format. */
export function jsonBody(request: IncomingRequest, errors: ErrorHelpers): Parsed {
  const contentType = request.header('content-type');
  const typeProblem = jsonContentTypeProblem(contentType);
  if (typeProblem !== undefined) {
    return {
      ok: false,
      reply: errors.badRequest(
        typeProblem.kind === 'missing'
          ? 'The request has a body but no Content-Type; send Content-Type: application/json.'
          : 'The Content-Type must be application/json (UTF-8).',
        [{ field: 'Content-Type', issue: 'must be application/json' }],
      ),
    };
  }
  // A large body of an operation with free values was parsed by the same rules off the event loop.
  const offloaded = request.offloaded;
  if (offloaded !== undefined) {
    if (offloaded.ok) return { ok: true, value: offloaded.value };
    const message =
      offloaded.problem === 'syntax'
        ? `The request body is not valid JSON: ${offloaded.reason ?? 'syntax error'}`
        : offloaded.problem === 'utf-8'
          ? 'The request body is not valid UTF-8.'
          : `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`;
    return { ok: false, reply: errors.badRequest(message) };
  }
  const parsed = parseJsonBody(request.rawBody);
  if (parsed.ok) return parsed;
  const message = parsed.problem === 'syntax' ? `The request body is not valid JSON: ${parsed.reason}` : parsed.message;
  return { ok: false, reply: errors.badRequest(message) };
}

// ---------------------------------------------------------------------------------------------
// Query strings

/** The query string of a path-and-query, without the `?`. */
export function queryString(url: string): string {
  const index = url.indexOf('?');
  return index < 0 ? '' : url.slice(index + 1);
}

/** Query parameters of a path-and-query: repeated names give arrays. */
export function queryOf(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  if (!url.includes('?')) return query;
  for (const [name, value] of new URLSearchParams(queryString(url))) {
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else query[name] = [existing, value];
  }
  return query;
}

/** Adds a hint to issues of query parameters sent with a bare `+` (which reads as a space). */
export function explainPlus(url: string, issues: ValidationIssue[]): ValidationIssue[] {
  const withPlus = new Set<string>();
  for (const pair of queryString(url).split('&')) {
    const [name = '', value = ''] = pair.split('=', 2);
    if (value.includes('+')) withPlus.add(safeDecode(name.replace(/\+/g, ' ')));
  }
  return issues.map((issue) =>
    withPlus.has(issue.field)
      ? { ...issue, issue: `${issue.issue} (a bare + in a query string reads as a space: write it %2B)` }
      : issue,
  );
}
