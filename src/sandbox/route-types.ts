/**
 * The types of the sandbox's routes: what a handler receives (the raw request, then the request of
 * a contract operation, typed from the generated `operations`) and what it answers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorReply } from './errors.js';
import type { OffloadedBody } from './json-offload.js';
import type { MeasuredJson } from './stored-json.js';

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
  /** A large body of an operation with free values, as the worker parsed it (json-offload.ts). */
  offloaded?: OffloadedBody;
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

type BodyOf<Op extends OperationShape> = Op extends { requestBody?: never }
  ? undefined
  : Op extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Op extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : undefined;

type ContentOf<R> = R extends { content: infer C } ? C[keyof C] : undefined;

/** The documented replies of an operation: `{ status, body }` for each status code it lists. */
type ReplyOf<Op extends OperationShape> = {
  [S in keyof Op['responses']]: S extends number
    ? { status: S; body: ContentOf<Op['responses'][S]>; headers?: Record<string, string> }
    : never;
}[keyof Op['responses']];

/** A validated request of an operation. */
export interface OperationRequest<Op extends OperationShape = LooseOperation, P = undefined> extends IncomingRequest {
  readonly operationId: string;
  /** Path parameters, coerced to their declared types. */
  readonly params: Defined<Op['parameters']['path']>;
  /** Declared query parameters, coerced to their declared types. */
  readonly query: Defined<Op['parameters']['query']>;
  /** Declared header parameters by their declared names. */
  readonly headerParams: Defined<Op['parameters']['header']>;
  /** The parsed and validated JSON body. */
  readonly body: BodyOf<Op>;
  /** What `authenticate` returned (the partner, the merchant, ...). */
  readonly principal: P;
  /**
   * The route's free values (its `freeJson`) of a large body, measured and written as text off the
   * event loop (json-offload.ts), by JSON pointer; `body` then holds a stand-in in their place.
   * Absent for a body parsed on the event loop: `body` holds them.
   */
  readonly kept?: ReadonlyMap<string, MeasuredJson>;
}

type HandlerResult<Op extends OperationShape> = ReplyOf<Op> | ErrorReply;

export interface OperationRoute<Op extends OperationShape = LooseOperation, P = undefined> {
  /**
   * Runs after the body is read and before it is parsed, over the raw request. Required when the
   * contract declares a security requirement for the operation.
   */
  authenticate?: (request: IncomingRequest) => AuthResult<P>;
  handle: (request: OperationRequest<Op, P>) => HandlerResult<Op> | Promise<HandlerResult<Op>>;
  /**
   * JSON pointers of the body's free values (`/notes`), kept as text: a large body is parsed off the
   * event loop and these come to `handle` as {@link OperationRequest.kept} (json-offload.ts).
   */
  freeJson?: readonly string[];
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

