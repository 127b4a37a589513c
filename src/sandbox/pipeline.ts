/**
 * One request's way through a route once the router found it (router.ts routes, reads the body and
 * sends the reply): what a route runs (its {@link Pipeline}), the authentication and the work as
 * one unit ({@link work}), the steps of a contract operation (JSON, the contract, the handler:
 * {@link runOperation}), the request a sandbox endpoint's handler gets ({@link SandboxRequestOf}),
 * and what the request log is told of it ({@link RouteFacts}).
 */
import type { ErrorHelpers } from './errors.js';
import { explainPlus, jsonBody, queryOf, queryString } from './io.js';
import {
  RequestError,
  type AuthResult,
  type IncomingRequest,
  type LooseOperation,
  type OperationRequest,
  type OperationRoute,
  type Reply,
  type SandboxRequest,
} from './route-types.js';
import { validateRequest, type ContractOperation, type FamilyName } from './validation.js';

/**
 * What the pipeline runs for one route after routing: the error format of its family, whether it
 * reads a body, the route's authentication, and the rest of the work, which answers a reply or
 * throws {@link RequestError}.
 */
export interface Pipeline {
  errors: ErrorHelpers;
  readsBody: boolean;
  /** The operation's free values (`OperationRoute.freeJson`): a large body is parsed off the event loop. */
  freeJson?: readonly string[];
  authenticate?: (request: IncomingRequest) => AuthResult<unknown>;
  run(request: IncomingRequest, principal: unknown, params: Record<string, string>, seen: Seen | undefined): Reply | Promise<Reply>;
  /** Names the route in the log line of an unexpected error. */
  describe(request: IncomingRequest): string;
  /** The route, set when it is registered. */
  info?: RouteInfo;
}

/** What the pipeline learnt of a request, for the router's `observe` (the request log); made only when one is set. */
export interface Seen {
  principal?: unknown;
  body?: unknown;
}

/**
 * What the pipeline knew of a request once it was answered, for the request log
 * (request-log.ts): the route, who it was (the route's principal), its parameters, the body as
 * parsed and as received, and the reply about to be sent.
 */
export interface RouteFacts {
  route: RouteInfo | undefined;
  principal: unknown;
  params: Record<string, string | undefined>;
  body: unknown;
  rawBody: Buffer;
  reply: Reply;
}

export interface RouteInfo {
  family: FamilyName | 'sandbox';
  method: string;
  path: string;
  operationId: string | undefined;
}

/**
 * The request of a sandbox endpoint: the incoming request with its path parameters, the query
 * parsed when first asked for, and the JSON body parsed when the handler asks.
 */
export class SandboxRequestOf implements SandboxRequest {
  readonly method: string;
  readonly url: string;
  readonly pathname: string;
  readonly headers: IncomingRequest['headers'];
  readonly rawBody: Buffer;
  readonly header: IncomingRequest['header'];
  private parsedQuery: URLSearchParams | undefined;

  constructor(
    incoming: IncomingRequest,
    /** find-my-way's parameters: percent-decoded strings. */
    readonly params: Record<string, string>,
    private readonly errors: ErrorHelpers,
    /** Where the parsed body goes for the request log, when it is on. */
    private readonly seen: Seen | undefined,
  ) {
    this.method = incoming.method;
    this.url = incoming.url;
    this.pathname = incoming.pathname;
    this.headers = incoming.headers;
    this.rawBody = incoming.rawBody;
    this.header = incoming.header;
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(queryString(this.url)));
  }

  json(): unknown {
    if (this.rawBody.length === 0) return undefined;
    const parsed = jsonBody(this, this.errors);
    if (!parsed.ok) throw new RequestError(parsed.reply);
    if (this.seen !== undefined) this.seen.body = parsed.value;
    return parsed.value;
  }
}

/** Step 3 and the rest of the route's work: what runs as one unit of work. */
export function work(pipeline: Pipeline, incoming: IncomingRequest, params: Record<string, string>, seen: Seen | undefined): Reply | Promise<Reply> {
  let principal: unknown;
  if (pipeline.authenticate !== undefined) {
    const result = pipeline.authenticate(incoming);
    if (!result.ok) return result.reply;
    principal = result.principal;
    if (seen !== undefined) seen.principal = principal;
  }
  return pipeline.run(incoming, principal, params, seen);
}

/** Steps 4 to 6 of a contract operation: JSON, the contract, the handler. */
export function runOperation(
  operation: ContractOperation,
  errors: ErrorHelpers,
  route: OperationRoute<LooseOperation, unknown>,
  incoming: IncomingRequest,
  principal: unknown,
  params: Record<string, string>,
  seen: Seen | undefined,
): Reply | Promise<Reply> {
  // 4. Content type and JSON.
  let body: unknown;
  if (operation.requestBody !== undefined && incoming.rawBody.length > 0) {
    const parsed = jsonBody(incoming, errors);
    if (!parsed.ok) return parsed.reply;
    body = parsed.value;
    if (seen !== undefined) seen.body = body;
  }

  // 5. The contract.
  const validation = validateRequest(operation, {
    params,
    query: queryOf(incoming.url),
    headers: incoming.headers,
    body,
  });
  if (!validation.ok) {
    const issues = validation.location === 'query' ? explainPlus(incoming.url, validation.issues) : validation.issues;
    return errors.invalid(validation.location, issues);
  }

  // 6. The handler.
  const request: OperationRequest<LooseOperation, unknown> = {
    method: incoming.method,
    url: incoming.url,
    pathname: incoming.pathname,
    headers: incoming.headers,
    rawBody: incoming.rawBody,
    header: incoming.header,
    operationId: operation.operationId,
    params: validation.value.params,
    query: validation.value.query,
    headerParams: validation.value.headers,
    body: validation.value.body,
    principal,
  } as OperationRequest<LooseOperation, unknown>;
  // Set only when there is one (no empty object spread into every request's literal).
  if (incoming.offloaded?.ok === true) (request as { kept?: unknown }).kept = incoming.offloaded.free;
  return route.handle(request);
}
