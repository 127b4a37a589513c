/**
 * Routing of the sandbox and its one request pipeline.
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
 * Sandbox endpoints and pages take steps 1, 2 and 6 (their handlers parse JSON when they want it).
 *
 * Every answer carries a request id (D29) in `X-Request-Id`, and every JSON error body repeats it as
 * `requestId`: the client's own `X-Request-Id` when it is a short safe token, else a new one.
 * The types of routes are in `route-types.ts`, the HTTP side (body, JSON, sending) in `io.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import { safeDecode } from '../contract/index.js';
import type { ErrorHelpers } from './errors.js';
import {
  assignRequestId,
  explainPlus,
  incomingRequest,
  jsonBody,
  malformedHeaders,
  queryOf,
  queryString,
  receiveBody,
  send,
  sendWithoutBody,
} from './io.js';
import {
  RequestError,
  type AuthResult,
  type IncomingRequest,
  type Logger,
  type LooseOperation,
  type OperationRequest,
  type OperationRoute,
  type OperationShape,
  type Reply,
  type SandboxHandler,
  type SandboxRequest,
} from './route-types.js';
import { StoreUnavailableError } from './store.js';
import { validateRequest, type Contract, type ContractOperation, type FamilyName } from './validation.js';

export * from './route-types.js';
export { assignRequestId, newRequestId, send } from './io.js';

/**
 * What the pipeline runs for one route after routing: the error format of its family, whether it
 * reads a body, the route's authentication, and the rest of the work, which answers a reply or
 * throws {@link RequestError}.
 */
interface Pipeline {
  errors: ErrorHelpers;
  readsBody: boolean;
  authenticate?: (request: IncomingRequest) => AuthResult<unknown>;
  run(request: IncomingRequest, principal: unknown, params: Record<string, string | undefined>, seen: Seen): Reply | Promise<Reply>;
  /** Names the route in the log line of an unexpected error. */
  describe(request: IncomingRequest): string;
  /** The route, set when it is registered. */
  info?: RouteInfo;
}

/** What the pipeline parsed of a request, for {@link RouterOptions.observe}. */
interface Seen {
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

// ---------------------------------------------------------------------------------------------
// The router

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

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
  /**
   * Runs a request's authentication and work as one unit of work (store.ts `Store.unit`); default:
   * at once. The shared store's units answer 503 with `Retry-After` when its database is away.
   */
  unit?: <T>(work: () => T) => T | Promise<Awaited<T>>;
  /** Told each request that went through the pipeline, just before its reply is sent (the request log). */
  observe?: (response: ServerResponse, facts: RouteFacts) => void;
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
    const loose = route as unknown as OperationRoute<LooseOperation, unknown>;
    const pipeline: Pipeline = {
      errors,
      readsBody: operation.requestBody !== undefined,
      authenticate: loose.authenticate,
      run: (incoming, principal, params, seen) => runOperation(operation, errors, loose, incoming, principal, params, seen),
      describe: () => `in ${operation.operationId}`,
    };
    this.add(family, operation.method as Method, operation.path, operationId, pipeline);
  }

  addSandbox(errors: ErrorHelpers, method: Method, path: string, handler: SandboxHandler): void {
    if (!path.startsWith('/sandbox/')) throw new Error(`sandbox endpoints live under /sandbox/ (got ${path})`);
    this.add('sandbox', method, path, undefined, this.sandboxPipeline(errors, handler));
  }

  /**
   * A page outside `/sandbox/` and outside the contract (the hosted checkout page, the landing
   * page): GET only (a body, if one is sent, is read within the limit like any sandbox request and
   * not used), the handler answers the whole reply (usually HTML).
   */
  addPage(errors: ErrorHelpers, path: string, handler: SandboxHandler): void {
    if (path.startsWith('/sandbox/') || path.startsWith('/api/')) throw new Error(`a page cannot live under ${path}`);
    this.add('sandbox', 'GET', path, undefined, this.sandboxPipeline(errors, handler));
  }

  private add(
    family: FamilyName | 'sandbox',
    method: Method,
    path: string,
    operationId: string | undefined,
    pipeline: Pipeline,
  ): void {
    const pattern = path.replace(/\{([^}]+)\}/g, ':$1');
    if (this.router.hasRoute(method, pattern)) throw new Error(`route ${method} ${path} is registered twice`);
    this.router.on(method, pattern, () => undefined, pipeline);
    pipeline.info = { family, method, path, operationId };
    this.routes.push(pipeline.info);
    const prefix = prefixOf(path);
    if (!this.prefixes.has(prefix)) this.prefixes.set(prefix, pipeline.errors);
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
    const segments = normalisedSegments(url);
    for (const route of this.secretRoutes) {
      if (segments.length <= route.last) continue;
      const matches = route.segments.every(
        (segment, index) => index > route.last || segment === undefined || segment === segments[index]!.toLowerCase(),
      );
      if (!matches) continue;
      for (const index of route.secret) segments[index] = REDACTED;
    }
    return segments.map((segment) => (segment === REDACTED ? segment : printableSegment(segment))).join('/') || '/';
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
        sendWithoutBody(request, response, errors.badRequest('The request target must be a path.'));
        return;
      }
      // HEAD is answered like GET; Node leaves the body out.
      const lookup = method === 'HEAD' ? 'GET' : method;
      const found = METHODS.includes(lookup as Method) ? this.router.find(lookup as Method, pathname) : null;
      if (found === null && !decodablePath(pathname)) {
        // A path that is not valid percent-encoding (a lone %, %zz, a cut UTF-8 sequence) names no
        // resource: the request is malformed, and the answer says how to fix it.
        sendWithoutBody(
          request,
          response,
          errors.badRequest('The path is not valid percent-encoding: write each reserved or non-ASCII byte of an id as %XX of its UTF-8 bytes.'),
        );
        return;
      }
      if (found === null) {
        const allowed: string[] = METHODS.filter((candidate) => this.router.find(candidate, pathname) !== null);
        if (allowed.length > 0) {
          errors = (this.router.find(allowed[0] as Method, pathname)?.store as Pipeline | undefined)?.errors ?? errors;
          if (allowed.includes('GET')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
          sendWithoutBody(request, response, errors.methodNotAllowed(allowed));
        } else {
          sendWithoutBody(request, response, errors.notFound(`No route for ${method} ${shorten(this.logPath(pathname))}.`));
        }
        return;
      }
      const pipeline = found.store as Pipeline;
      errors = pipeline.errors;
      const malformed = malformedHeaders(request, errors);
      if (malformed !== undefined) {
        sendWithoutBody(request, response, malformed, true);
        return;
      }
      await this.run(pipeline, request, response, found.params);
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

  /** Steps 2, 3 and 6 for every route: the body, authentication, the work, one reply. */
  private async run(
    pipeline: Pipeline,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string | undefined>,
  ): Promise<void> {
    const { errors } = pipeline;
    const rawBody = await receiveBody(request, response, errors, this.options.bodyLimit, pipeline.readsBody);
    if (rawBody === undefined) return;
    const incoming = incomingRequest(request, rawBody);
    const seen: Seen = {};
    let principal: unknown;
    const work = (): Reply | Promise<Reply> => {
      if (pipeline.authenticate !== undefined) {
        const result = pipeline.authenticate(incoming);
        if (!result.ok) return result.reply;
        principal = result.principal;
      }
      return pipeline.run(incoming, principal, params, seen);
    };
    let reply: Reply;
    try {
      reply = await (this.options.unit === undefined ? work() : this.options.unit(work));
    } catch (error) {
      if (error instanceof RequestError) {
        reply = error.reply;
      } else if (error instanceof StoreUnavailableError) {
        reply = {
          ...errors.error(
            503,
            'SERVICE_UNAVAILABLE',
            `The sandbox cannot reach its database, so nothing was done: ${error.message}. Try again in ${error.retryAfterSeconds} s.`,
          ),
          headers: { 'Retry-After': String(error.retryAfterSeconds) },
        };
      } else {
        this.options.log.error(`unexpected error ${pipeline.describe(incoming)} (${assignRequestId(request, response)})`, error);
        reply = errors.internal();
      }
    }
    this.options.observe?.(response, { route: pipeline.info, principal, params, body: seen.body, rawBody, reply });
    send(response, reply);
  }

  /** Sandbox endpoints and pages: the body is always read, parsed when the handler asks. */
  private sandboxPipeline(errors: ErrorHelpers, handler: SandboxHandler): Pipeline {
    return {
      errors,
      readsBody: true,
      run: (incoming, _principal, params, seen) => {
        const decodedParams: Record<string, string> = {};
        for (const [name, value] of Object.entries(params)) if (value !== undefined) decodedParams[name] = value;
        const request: SandboxRequest = {
          ...incoming,
          params: decodedParams,
          query: new URLSearchParams(queryString(incoming.url)),
          json() {
            if (incoming.rawBody.length === 0) return undefined;
            const parsed = jsonBody(incoming, errors);
            if (!parsed.ok) throw new RequestError(parsed.reply);
            seen.body = parsed.value;
            return parsed.value;
          },
        };
        return handler(request);
      },
      describe: (incoming) => `on ${incoming.method} ${this.logPath(incoming.pathname)}`,
    };
  }
}

/** Steps 4 to 6 of a contract operation: JSON, the contract, the handler. */
async function runOperation(
  operation: ContractOperation,
  errors: ErrorHelpers,
  route: OperationRoute<LooseOperation, unknown>,
  incoming: IncomingRequest,
  principal: unknown,
  params: Record<string, string | undefined>,
  seen: Seen,
): Promise<Reply> {
  // 4. Content type and JSON.
  let body: unknown;
  if (operation.requestBody !== undefined && incoming.rawBody.length > 0) {
    const parsed = jsonBody(incoming, errors);
    if (!parsed.ok) return parsed.reply;
    body = parsed.value;
    seen.body = body;
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
  return route.handle({
    ...incoming,
    operationId: operation.operationId,
    params: validation.value.params,
    query: validation.value.query,
    headerParams: validation.value.headers,
    body: validation.value.body,
    principal,
  } as OperationRequest<LooseOperation, unknown>);
}

// ---------------------------------------------------------------------------------------------
// Helpers

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

const REDACTED = '[redacted]';

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
  return secret.length === 0 ? undefined : { segments, secret, last: Math.max(...secret) };
}

function prefixOf(path: string): string {
  return path.split('/').slice(0, 3).join('/');
}

/** Whether every %-escape of the path is valid and the bytes are UTF-8 (as the router decodes ids). */
function decodablePath(pathname: string): boolean {
  if (!pathname.includes('%')) return true;
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}
