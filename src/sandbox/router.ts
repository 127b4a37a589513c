/**
 * Routing and the request pipeline of the sandbox.
 *
 * A contract operation is registered by its operationId; every request to it goes through the
 * same steps, in this order, each answering in the family's error format:
 *   1. route: unknown path 404, known path with another method 405 (+ `Allow`);
 *   2. body: read with the size limit (413 without buffering past it, D24); operations without a
 *      request body read none;
 *   3. authenticate (the route's own check: signature, Basic credentials), over the raw bytes;
 *   4. Content-Type `application/json`, UTF-8, JSON syntax (400);
 *   5. parameters and body against the contract (400 with details);
 *   6. the handler, whose reply is sent as JSON; an exception becomes the family's 500.
 *
 * Every answer carries a request id (D29) in `X-Request-Id`, and every JSON error body repeats it as
 * `requestId`: the client's own `X-Request-Id` when it is a short safe token, else a new one.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import type { ErrorHelpers, ErrorReply } from './errors.js';
import type { Contract, ContractOperation, FamilyName, ValidationIssue } from './validation.js';

// ---------------------------------------------------------------------------------------------
// Replies and requests

/** What a handler answers. A JSON body unless `headers['Content-Type']` says otherwise. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The request as received, before parsing: what an authentication check needs. */
export interface IncomingRequest {
  /** Upper-case method. */
  readonly method: string;
  /** The path and query exactly as received (`req.url`): what the web signature covers. */
  readonly url: string;
  /** The path without the query, not decoded. */
  readonly pathname: string;
  /** Lower-case header names, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  /** The body bytes exactly as received (empty when the operation takes no body). */
  readonly rawBody: Buffer;
  /** A header's value; the first one when repeated. */
  header(name: string): string | undefined;
}

export type AuthResult<P> = { ok: true; principal: P } | { ok: false; reply: ErrorReply };

// Types of an operation, from the generated `operations` of openapi-typescript.

/** The shape of an entry of a generated `operations` interface. */
export interface OperationShape {
  parameters: { query?: unknown; header?: unknown; path?: unknown; cookie?: unknown };
  requestBody?: unknown;
  responses: object;
}

/** The default when a route names no operation type: everything loosely typed. */
export interface LooseOperation extends OperationShape {
  parameters: {
    query: Record<string, unknown>;
    header: Record<string, unknown>;
    path: Record<string, unknown>;
  };
  requestBody: { content: { 'application/json': unknown } };
  responses: Record<number, { content: { 'application/json': unknown } }>;
}

type Defined<T> = [T] extends [never] ? Record<string, never> : [T] extends [undefined] ? Record<string, never> : NonNullable<T>;

export type PathParamsOf<Op extends OperationShape> = Defined<Op['parameters']['path']>;
export type QueryOf<Op extends OperationShape> = Defined<Op['parameters']['query']>;
export type HeaderParamsOf<Op extends OperationShape> = Defined<Op['parameters']['header']>;
export type BodyOf<Op extends OperationShape> = Op extends { requestBody?: never }
  ? undefined
  : Op extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Op extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : undefined;

type ContentOf<R> = R extends { content: infer C } ? C[keyof C] : undefined;

/** The documented replies of an operation: `{ status, body }` for each status code it lists. */
export type ReplyOf<Op extends OperationShape> = {
  [S in keyof Op['responses']]: S extends number
    ? { status: S; body: ContentOf<Op['responses'][S]>; headers?: Record<string, string> }
    : never;
}[keyof Op['responses']];

/** A validated request of an operation. */
export interface OperationRequest<Op extends OperationShape = LooseOperation, P = undefined> extends IncomingRequest {
  readonly operationId: string;
  /** Path parameters, coerced to their declared types. */
  readonly params: PathParamsOf<Op>;
  /** Declared query parameters, coerced to their declared types. */
  readonly query: QueryOf<Op>;
  /** Declared header parameters by their declared names. */
  readonly headerParams: HeaderParamsOf<Op>;
  /** The parsed and validated JSON body. */
  readonly body: BodyOf<Op>;
  /** What `authenticate` returned (the partner, the merchant, ...). */
  readonly principal: P;
}

export type HandlerResult<Op extends OperationShape> = ReplyOf<Op> | ErrorReply;

export interface OperationRoute<Op extends OperationShape = LooseOperation, P = undefined> {
  /**
   * Runs after the body is read and before it is parsed, over the raw request. Required when the
   * contract declares a security requirement for the operation.
   */
  authenticate?: (request: IncomingRequest) => AuthResult<P>;
  handle: (request: OperationRequest<Op, P>) => HandlerResult<Op> | Promise<HandlerResult<Op>>;
}

/** A request of a `/sandbox/` endpoint (not part of the contract). */
export interface SandboxRequest extends IncomingRequest {
  /** Path parameters, percent-decoded. */
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  /** The JSON body, `undefined` when empty; a client mistake throws {@link RequestError}. */
  json(): unknown;
}

export type SandboxHandler = (request: SandboxRequest) => Reply | Promise<Reply>;

/** Thrown by a handler to answer an error reply at once. */
export class RequestError extends Error {
  constructor(readonly reply: ErrorReply) {
    super(`request error ${reply.status}`);
  }
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** `error` is described without request data (no bodies, no headers). */
  error(message: string, error?: unknown): void;
}

// ---------------------------------------------------------------------------------------------
// The router

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface RouteEntry {
  family: FamilyName | 'sandbox';
  errors: ErrorHelpers;
  run(request: IncomingMessage, response: ServerResponse, params: Record<string, string | undefined>): Promise<void>;
}

export interface RouteInfo {
  family: FamilyName | 'sandbox';
  method: string;
  path: string;
  operationId: string | undefined;
}

export interface RouterOptions {
  bodyLimit: number;
  log: Logger;
  /** The error format for paths no family claims. */
  fallbackErrors: ErrorHelpers;
}

export class Router {
  private readonly router = FindMyWay({
    ignoreTrailingSlash: false,
    caseSensitive: true,
    maxParamLength: 2048,
  });
  private readonly routes: RouteInfo[] = [];
  /** `/first/second` prefixes of registered paths, to answer a 404 in the right format. */
  private readonly prefixes = new Map<string, ErrorHelpers>();
  /** Routes with a secret in their path (a `{token}`), whose value is never logged. */
  private readonly secretRoutes: SecretRoute[] = [];

  constructor(private readonly options: RouterOptions) {}

  /** Every registered route. */
  list(): readonly RouteInfo[] {
    return this.routes;
  }

  /** The operationIds implemented for a family. */
  implemented(family: FamilyName): Set<string> {
    return new Set(
      this.routes.filter((route) => route.family === family && route.operationId !== undefined).map((route) => route.operationId!),
    );
  }

  addOperation<Op extends OperationShape, P>(
    family: FamilyName,
    contract: Contract,
    errors: ErrorHelpers,
    operationId: string,
    route: OperationRoute<Op, P>,
  ): void {
    const operation = contract.operation(operationId);
    if (operation.webhook) throw new Error(`${operationId} is a webhook, not a route`);
    if (operation.secured && route.authenticate === undefined) {
      throw new Error(`${operationId} is secured in the ${family} contract: its route needs authenticate()`);
    }
    const run = (request: IncomingMessage, response: ServerResponse, params: Record<string, string | undefined>) =>
      this.runOperation(operation, errors, route as unknown as OperationRoute<LooseOperation, unknown>, request, response, params);
    this.add(family, errors, operation.method as Method, operation.path, operationId, run);
  }

  addSandbox(errors: ErrorHelpers, method: Method, path: string, handler: SandboxHandler): void {
    if (!path.startsWith('/sandbox/')) throw new Error(`sandbox endpoints live under /sandbox/ (got ${path})`);
    const run = (request: IncomingMessage, response: ServerResponse, params: Record<string, string | undefined>) =>
      this.runSandbox(errors, handler, request, response, params);
    this.add('sandbox', errors, method, path, undefined, run);
  }

  /**
   * A page outside `/sandbox/` and outside the contract (the hosted checkout page, the landing
   * page): GET only, no body read, the handler answers the whole reply (usually HTML).
   */
  addPage(errors: ErrorHelpers, path: string, handler: SandboxHandler): void {
    if (path.startsWith('/sandbox/') || path.startsWith('/api/')) throw new Error(`a page cannot live under ${path}`);
    const run = (request: IncomingMessage, response: ServerResponse, params: Record<string, string | undefined>) =>
      this.runSandbox(errors, handler, request, response, params);
    this.add('sandbox', errors, 'GET', path, undefined, run);
  }

  private add(
    family: FamilyName | 'sandbox',
    errors: ErrorHelpers,
    method: Method,
    path: string,
    operationId: string | undefined,
    run: RouteEntry['run'],
  ): void {
    const pattern = path.replace(/\{([^}]+)\}/g, ':$1');
    if (this.router.hasRoute(method, pattern)) throw new Error(`route ${method} ${path} is registered twice`);
    const entry: RouteEntry = { family, errors, run };
    this.router.on(method, pattern, () => undefined, entry);
    this.routes.push({ family, method, path, operationId });
    const prefix = prefixOf(path);
    if (!this.prefixes.has(prefix)) this.prefixes.set(prefix, errors);
    const secret = secretRoute(path);
    if (secret !== undefined) this.secretRoutes.push(secret);
  }

  /**
   * A request's path as it may be logged: without the query (which may carry anything), and with
   * every secret path segment (the dashboard invitation token) replaced by `[redacted]`, also when
   * the rest of the path does not match the route exactly.
   */
  logPath(url: string): string {
    const pathname = url.split('?', 1)[0] ?? '/';
    if (this.secretRoutes.length === 0) return pathname;
    const segments = pathname.split('/');
    for (const route of this.secretRoutes) {
      if (segments.length <= route.last) continue;
      const matches = route.segments.every(
        (segment, index) => index > route.last || segment === undefined || segment === normaliseSegment(segments[index]!),
      );
      if (!matches) continue;
      for (const index of route.secret) segments[index] = '[redacted]';
    }
    return segments.join('/');
  }

  /** Handles one HTTP request; never throws. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    const method = (request.method ?? 'GET').toUpperCase();
    const pathname = url.split('?', 1)[0] ?? '/';
    const requestId = assignRequestId(request, response);
    let errors = this.errorsForPath(pathname);
    try {
      if (!url.startsWith('/')) {
        discard(request);
        send(response, errors.badRequest('The request target must be a path.'));
        return;
      }
      // HEAD is answered like GET; Node leaves the body out.
      const lookup = method === 'HEAD' ? 'GET' : method;
      const found = METHODS.includes(lookup as Method) ? this.router.find(lookup as Method, pathname) : null;
      if (found === null) {
        discard(request);
        const allowed: string[] = METHODS.filter((candidate) => this.router.find(candidate, pathname) !== null);
        if (allowed.length > 0) {
          const entry = this.router.find(allowed[0] as Method, pathname)?.store as RouteEntry | undefined;
          errors = entry?.errors ?? errors;
          if (allowed.includes('GET')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
          send(response, errors.methodNotAllowed(allowed));
        } else {
          send(response, errors.notFound(`No route for ${method} ${shorten(pathname)}.`));
        }
        return;
      }
      const entry = found.store as RouteEntry;
      errors = entry.errors;
      const malformed = malformedHeaders(request, errors);
      if (malformed !== undefined) {
        discard(request);
        send(response, { ...malformed, headers: { ...malformed.headers, Connection: 'close' } });
        return;
      }
      await entry.run(request, response, found.params);
    } catch (error) {
      this.options.log.error(`unexpected error on ${method} ${this.logPath(url)} (${requestId})`, error);
      if (!response.headersSent) send(response, errors.internal());
      else response.destroy();
    }
  }

  /** The error format of the family a path belongs to (by its first two segments). */
  errorsForPath(url: string): ErrorHelpers {
    const pathname = url.split('?', 1)[0] ?? '/';
    return this.prefixes.get(prefixOf(pathname)) ?? this.options.fallbackErrors;
  }

  private async runOperation(
    operation: ContractOperation,
    errors: ErrorHelpers,
    route: OperationRoute<LooseOperation, unknown>,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string | undefined>,
  ): Promise<void> {
    // 2. The body, with its limit.
    let rawBody: Buffer = EMPTY;
    if (operation.requestBody !== undefined) {
      const read = await readBody(request, this.options.bodyLimit);
      if (!read.ok) {
        if (read.reason === 'too-large') sendTooLarge(request, response, errors.payloadTooLarge(this.options.bodyLimit));
        else response.destroy();
        return;
      }
      rawBody = read.body;
    } else {
      discard(request);
    }
    const incoming = incomingRequest(request, rawBody);

    // 3. Authentication, over the raw request.
    let principal: unknown;
    if (route.authenticate !== undefined) {
      const result = route.authenticate(incoming);
      if (!result.ok) {
        send(response, result.reply);
        return;
      }
      principal = result.principal;
    }

    // 4. Content type and JSON.
    let body: unknown;
    if (operation.requestBody !== undefined && rawBody.length > 0) {
      const parsed = parseJsonBody(incoming, errors);
      if (!parsed.ok) {
        send(response, parsed.reply);
        return;
      }
      body = parsed.value;
    }

    // 5. The contract.
    const validation = operation.validateRequest({
      params,
      query: queryOf(incoming.url),
      headers: incoming.headers,
      body,
    });
    if (!validation.ok) {
      const issues =
        validation.location === 'query' ? explainPlus(incoming.url, validation.issues) : validation.issues;
      send(response, errors.invalid(validation.location, issues));
      return;
    }

    // 6. The handler.
    let reply: Reply;
    try {
      reply = await route.handle({
        ...incoming,
        header: incoming.header,
        operationId: operation.operationId,
        params: validation.value.params,
        query: validation.value.query,
        headerParams: validation.value.headers,
        body: validation.value.body,
        principal,
      } as OperationRequest<LooseOperation, unknown>);
    } catch (error) {
      if (error instanceof RequestError) {
        reply = error.reply;
      } else {
        this.options.log.error(`unexpected error in ${operation.operationId} (${requestIdOf(response)})`, error);
        reply = errors.internal();
      }
    }
    send(response, reply);
  }

  private async runSandbox(
    errors: ErrorHelpers,
    handler: SandboxHandler,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string | undefined>,
  ): Promise<void> {
    const read = await readBody(request, this.options.bodyLimit);
    if (!read.ok) {
      if (read.reason === 'too-large') sendTooLarge(request, response, errors.payloadTooLarge(this.options.bodyLimit));
      else response.destroy();
      return;
    }
    const body = read.body;
    const incoming = incomingRequest(request, body);
    const decodedParams: Record<string, string> = {};
    for (const [name, value] of Object.entries(params)) if (value !== undefined) decodedParams[name] = value;
    const sandboxRequest: SandboxRequest = {
      ...incoming,
      header: incoming.header,
      params: decodedParams,
      query: new URLSearchParams(incoming.url.includes('?') ? incoming.url.slice(incoming.url.indexOf('?') + 1) : ''),
      json() {
        if (body.length === 0) return undefined;
        const parsed = parseJsonBody(incoming, errors);
        if (!parsed.ok) throw new RequestError(parsed.reply);
        return parsed.value;
      },
    };
    let reply: Reply;
    try {
      reply = await handler(sandboxRequest);
    } catch (error) {
      if (error instanceof RequestError) {
        reply = error.reply;
      } else {
        this.options.log.error(
          `unexpected error on ${incoming.method} ${this.logPath(incoming.pathname)} (${requestIdOf(response)})`,
          error,
        );
        reply = errors.internal();
      }
    }
    send(response, reply);
  }
}

// ---------------------------------------------------------------------------------------------
// Request ids (D29)

/** A request id the client may choose: the `RequestId` schema of the contract. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const requestIds = new WeakMap<ServerResponse, string>();

/** A new request id: `req_` and 24 hex digits. */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/**
 * Gives the request its id (once): the client's `X-Request-Id` when it is one short safe token,
 * else a new one; sets the `X-Request-Id` response header. Returns the id.
 */
export function assignRequestId(request: IncomingMessage, response: ServerResponse): string {
  const existing = requestIds.get(response);
  if (existing !== undefined) return existing;
  const offered = request.headers['x-request-id'];
  const id = typeof offered === 'string' && REQUEST_ID_PATTERN.test(offered) ? offered : newRequestId();
  requestIds.set(response, id);
  if (!response.headersSent) response.setHeader('X-Request-Id', id);
  return id;
}

/** The id given to the request this response answers (assigned on first use). */
export function requestIdOf(response: ServerResponse): string {
  return requestIds.get(response) ?? assignRequestId(response.req, response);
}

// ---------------------------------------------------------------------------------------------
// Helpers

const EMPTY = Buffer.alloc(0);
/** After a 413, at most this much more is read (and thrown away) before the connection is cut. */
const DISCARD_LIMIT = 16 * 1024 * 1024;

/**
 * Headers no operation can work with, answered 400 before anything else: no `Host` on HTTP/1.1
 * (Node's own answer would be an empty 400), and `Authorization` given more than once (Node would
 * silently keep the first).
 */
function malformedHeaders(request: IncomingMessage, errors: ErrorHelpers): ErrorReply | undefined {
  if (request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor >= 1) {
    return errors.badRequest('The request has no Host header; HTTP/1.1 requires one (the address of the sandbox, e.g. Host: 127.0.0.1:4000).', [
      { field: 'Host', issue: 'is required' },
    ]);
  }
  const authorization = request.headersDistinct.authorization;
  if (authorization !== undefined && authorization.length > 1) {
    return errors.badRequest(
      `The request has ${authorization.length} Authorization headers; send exactly one.`,
      [{ field: 'Authorization', issue: 'must be given exactly once' }],
    );
  }
  return undefined;
}

function shorten(text: string): string {
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
  return secret.length === 0 ? undefined : { segments, secret, last: Math.max(...secret) };
}

/** A path segment as compared with a route's: percent-decoded, lower case. */
function normaliseSegment(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

function prefixOf(path: string): string {
  return path.split('/').slice(0, 3).join('/');
}

function incomingRequest(request: IncomingMessage, rawBody: Buffer): IncomingRequest {
  const url = request.url ?? '/';
  return {
    method: (request.method ?? 'GET').toUpperCase(),
    url,
    pathname: url.split('?', 1)[0] ?? '/',
    headers: request.headers,
    rawBody,
    header(name: string) {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
  };
}

/** Query parameters of a path-and-query: repeated names give arrays. */
export function queryOf(url: string): Record<string, string | string[]> {
  const index = url.indexOf('?');
  const query: Record<string, string | string[]> = {};
  if (index < 0) return query;
  for (const [name, value] of new URLSearchParams(url.slice(index + 1))) {
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else query[name] = [existing, value];
  }
  return query;
}

/** Adds a hint to issues of query parameters sent with a bare `+` (which reads as a space). */
function explainPlus(url: string, issues: ValidationIssue[]): ValidationIssue[] {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const withPlus = new Set<string>();
  for (const pair of query.split('&')) {
    const [name = '', value = ''] = pair.split('=', 2);
    if (value.includes('+')) withPlus.add(safeDecode(name));
  }
  return issues.map((issue) =>
    withPlus.has(issue.field)
      ? { ...issue, issue: `${issue.issue} (a bare + in a query string reads as a space: write it %2B)` }
      : issue,
  );
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

type BodyRead = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/** Reads the body up to `limit` bytes; beyond it, stops keeping bytes and reports failure. */
function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, reason: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        chunks.length = 0;
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, body: Buffer.concat(chunks, size) });
    });
    // The client went away before the body ended: nobody is left to answer.
    const aborted = () => {
      if (settled) return;
      settled = true;
      resolve({ ok: false, reason: 'aborted' });
    };
    request.on('error', aborted);
    request.on('close', aborted);
  });
}

/** Reads and throws away a body nobody needs (without keeping it). */
function discard(request: IncomingMessage): void {
  if (request.readableEnded) return;
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT) request.socket.destroy();
  });
  request.resume();
}

/** Answers 413 at once, then throws away the rest of the body and closes the connection. */
function sendTooLarge(request: IncomingMessage, response: ServerResponse, reply: ErrorReply): void {
  discard(request);
  send(response, { ...reply, headers: { ...reply.headers, Connection: 'close' } });
}

type Parsed = { ok: true; value: unknown } | { ok: false; reply: ErrorReply };

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseJsonBody(request: IncomingRequest, errors: ErrorHelpers): Parsed {
  const contentType = request.header('content-type');
  if (!isJsonContentType(contentType)) {
    return {
      ok: false,
      reply: errors.badRequest(
        contentType === undefined
          ? 'The request has a body but no Content-Type; send Content-Type: application/json.'
          : 'The Content-Type must be application/json (UTF-8).',
        [{ field: 'Content-Type', issue: 'must be application/json' }],
      ),
    };
  }
  let text: string;
  try {
    text = UTF8.decode(request.rawBody);
  } catch {
    return { ok: false, reply: errors.badRequest('The request body is not valid UTF-8.') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'syntax error';
    return { ok: false, reply: errors.badRequest(`The request body is not valid JSON: ${reason}`) };
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    return {
      ok: false,
      reply: errors.badRequest(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`),
    };
  }
  return { ok: true, value };
}

/**
 * The deepest nesting of arrays and objects a JSON body may have. Deeper data (a 10 KB body can be
 * thousands of levels deep) would overflow the stack where it is validated, copied into the store
 * (structuredClone) or serialized again, and turn a client mistake into a 500.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether arrays and objects nest more than `limit` levels (the body itself is level 1); iterative. */
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** `application/json`, optionally with `charset=utf-8`; nothing else. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return parameters.every((parameter) => {
    if (parameter === '') return true;
    const [name, raw] = parameter.split('=', 2).map((part) => part.trim());
    if (name !== 'charset') return true;
    return (raw ?? '').replace(/^"|"$/g, '') === 'utf-8';
  });
}

/**
 * Writes a reply: JSON unless `Content-Type` is set and the body is a string or bytes. A JSON error
 * body (status 400 or more) gets the request's id as `requestId` (D29).
 */
export function send(response: ServerResponse, reply: Reply): void {
  if (response.headersSent || response.destroyed) return;
  const headers: Record<string, string> = { 'Cache-Control': 'no-store', ...reply.headers };
  let payload: string | Buffer = '';
  const explicitType = Object.keys(headers).find((name) => name.toLowerCase() === 'content-type');
  if (explicitType !== undefined && (typeof reply.body === 'string' || Buffer.isBuffer(reply.body))) {
    payload = reply.body;
  } else if (reply.body !== undefined) {
    const body =
      reply.status >= 400 && isPlainObject(reply.body) ? { ...reply.body, requestId: requestIdOf(response) } : reply.body;
    payload = JSON.stringify(body);
    if (explicitType === undefined) headers['Content-Type'] = 'application/json; charset=utf-8';
  }
  headers['Content-Length'] = String(Buffer.byteLength(payload));
  response.writeHead(reply.status, headers);
  response.end(payload);
}
