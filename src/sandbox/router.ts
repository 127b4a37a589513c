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
 * The types of routes are in `route-types.ts`, the HTTP side (body, JSON, sending) in `io.ts`, the
 * steps after routing (authentication, JSON, the contract, the handler) in `pipeline.ts`, and the
 * paths of log lines in `route-paths.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import FindMyWay from 'find-my-way';
import type { ErrorHelpers } from './errors.js';
import { assignRequestId, incomingRequest, malformedHeaders, receiveBody, refuseBody, send, sendWithoutBody } from './io.js';
import type { IncomingRequest, Logger, LooseOperation, OperationRoute, OperationShape, Reply, SandboxHandler } from './route-types.js';
import { RequestError } from './route-types.js';
import { StoreUnavailableError } from './store.js';
import type { Contract, FamilyName } from './validation.js';
import { outsideDescription } from './outside-description.js';
import { OFFLOAD_BYTES, type OffloadedBody } from './json-offload.js';
import { jsonContentTypeProblem } from '../http/json.js';
import { runOperation, SandboxRequestOf, work, type Pipeline, type RouteFacts, type RouteInfo } from './pipeline.js';
import { decodablePath, LogPaths, prefixOf, shorten } from './route-paths.js';

export * from './route-types.js';
export { assignRequestId, newRequestId, send } from './io.js';
export type { RouteFacts, RouteInfo } from './pipeline.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** The methods routes are registered for (HEAD is answered as GET). */
export const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const ROUTED_METHODS: ReadonlySet<string> = new Set(METHODS);

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
  /** Parses a large body off the event loop (json-offload.ts); without it every body is parsed here. */
  offload?: (bytes: Uint8Array, pointers: readonly string[]) => Promise<OffloadedBody | undefined>;
  /**
   * Runs the work of a request whose body (or large-body parse) came in later, in the request's turn
   * (fair-turns.ts `resume`); default: at once.
   */
  resume?: <T>(request: IncomingMessage, work: () => T) => T | Promise<Awaited<T>>;
}

/** What {@link RouteFacts.reply} holds until the reply is known (the log is told only after). */
const NO_REPLY: Reply = Object.freeze({ status: 500, body: undefined });

export class Router {
  private readonly router = FindMyWay({
    ignoreTrailingSlash: false,
    caseSensitive: true,
    maxParamLength: 2048,
  });
  private readonly routes: RouteInfo[] = [];
  /** `/first/second` prefixes of registered paths, to answer a 404 in the right format. */
  private readonly prefixes = new Map<string, ErrorHelpers>();
  private readonly paths = new LogPaths();

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
      ...(loose.freeJson === undefined ? {} : { freeJson: loose.freeJson }),
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
    this.paths.add(path);
  }

  /** A request's path as it may be logged ({@link LogPaths.logPath}: secrets redacted, normalised). */
  logPath(url: string): string {
    return this.paths.logPath(url);
  }

  /**
   * Handles one HTTP request; never throws, and its promise (when the answer waits for a body or
   * for asynchronous work) never rejects. A request answered at once returns undefined: no promise
   * is made for it.
   */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void> | undefined {
    const url = request.url ?? '/';
    const method = (request.method ?? 'GET').toUpperCase();
    const query = url.indexOf('?');
    const pathname = query < 0 ? url : url.slice(0, query);
    let errors: ErrorHelpers | undefined;
    try {
      if (!url.startsWith('/')) {
        sendWithoutBody(request, response, this.errorsForPath(pathname).badRequest('The request target must be a path.'));
        return undefined;
      }
      // HEAD is answered like GET; Node leaves the body out.
      const lookup = method === 'HEAD' ? 'GET' : method;
      const found = ROUTED_METHODS.has(lookup) ? this.router.find(lookup as Method, pathname) : null;
      if (found === null) {
        this.unrouted(request, response, method, pathname);
        return undefined;
      }
      const pipeline = found.store as Pipeline;
      errors = pipeline.errors;
      const malformed = malformedHeaders(request, errors);
      if (malformed !== undefined) {
        sendWithoutBody(request, response, malformed, true);
        return undefined;
      }
      const running = this.run(pipeline, request, response, found.params as Record<string, string>, method, url, pathname);
      const routeErrors = errors;
      return running?.catch((error: unknown) => this.unexpected(request, response, method, url, routeErrors, error));
    } catch (error) {
      this.unexpected(request, response, method, url, errors ?? this.errorsForPath(pathname), error);
      return undefined;
    }
  }

  /** An exception no step answered: logged, and the family's 500 when the answer has not started. */
  private unexpected(request: IncomingMessage, response: ServerResponse, method: string, url: string, errors: ErrorHelpers, error: unknown): void {
    this.options.log.error(`unexpected error on ${method} ${this.logPath(url)} (${assignRequestId(request, response)})`, error);
    if (!response.headersSent) send(response, errors.internal());
    else response.destroy();
  }

  /** The answer to a request no route takes: 400 for a path that is not percent-encoding, 405, 404. */
  private unrouted(request: IncomingMessage, response: ServerResponse, method: string, pathname: string): void {
    let errors = this.errorsForPath(pathname);
    if (!decodablePath(pathname)) {
      // A path that is not valid percent-encoding (a lone %, %zz, a cut UTF-8 sequence) names no
      // resource: the request is malformed, and the answer says how to fix it.
      sendWithoutBody(
        request,
        response,
        errors.badRequest('The path is not valid percent-encoding: write each reserved or non-ASCII byte of an id as %XX of its UTF-8 bytes.'),
      );
      return;
    }
    const allowed: string[] = METHODS.filter((candidate) => this.router.find(candidate, pathname) !== null);
    if (allowed.length > 0) {
      errors = (this.router.find(allowed[0] as Method, pathname)?.store as Pipeline | undefined)?.errors ?? errors;
      if (allowed.includes('GET')) allowed.splice(allowed.indexOf('GET') + 1, 0, 'HEAD');
      sendWithoutBody(request, response, errors.methodNotAllowed(allowed));
    } else {
      // D124: a path of the service's own code outside the description says so.
      const outside = outsideDescription(method, pathname);
      sendWithoutBody(request, response, errors.notFound(outside ?? `No route for ${method} ${shorten(this.logPath(pathname))}.`));
    }
  }

  /** The error format of the family a path belongs to (by its first two segments). */
  errorsForPath(url: string): ErrorHelpers {
    const pathname = url.split('?', 1)[0] ?? '/';
    return this.prefixes.get(prefixOf(pathname)) ?? this.options.fallbackErrors;
  }

  /**
   * Steps 2, 3 and 6 for every route: the body, authentication, the work, one reply. Without a body
   * to wait for and with a handler that answers at once, everything happens in this call (no
   * promise); otherwise the promise settles once the reply is sent.
   */
  private run(
    pipeline: Pipeline,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string>,
    method: string,
    url: string,
    pathname: string,
  ): Promise<void> | undefined {
    const received = receiveBody(request, this.options.bodyLimit, pipeline.readsBody);
    if (received instanceof Promise) {
      // One promise from the read to the answer: the read's result is looked at here, not mapped by another `then`.
      return received.then((read) =>
        read.ok
          ? this.resumed(request, () => this.proceed(pipeline, request, response, params, method, url, pathname, read.body))
          : refuseBody(request, response, pipeline.errors, this.options.bodyLimit, read.reason),
      );
    }
    return this.proceed(pipeline, request, response, params, method, url, pathname, received);
  }

  /** Once the body is in: a large one parsed off the event loop, then {@link answer}. */
  private proceed(
    pipeline: Pipeline,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string>,
    method: string,
    url: string,
    pathname: string,
    rawBody: Buffer,
  ): Promise<void> | undefined {
    const incoming = incomingRequest(request, rawBody, method, url, pathname);
    const offloading = this.offload(pipeline, incoming);
    if (offloading === undefined) return this.answer(pipeline, request, response, params, incoming);
    return offloading.then(() => this.resumed(request, () => this.answer(pipeline, request, response, params, incoming)));
  }

  /** `work`, the rest of a request that waited for its body, in the request's turn ({@link RouterOptions.resume}). */
  private resumed<T>(request: IncomingMessage, work: () => T): T | Promise<Awaited<T>> {
    const { resume } = this.options;
    return resume === undefined ? work() : resume(request, work);
  }

  /**
   * A large JSON body of an operation with free values, parsed in the worker (json-offload.ts) and
   * set as `incoming.offloaded`; `undefined` when the body is parsed on the event loop (small, not
   * JSON, or no worker). Runs before authentication: the worker's time is not the event loop's.
   */
  private offload(pipeline: Pipeline, incoming: IncomingRequest): Promise<void> | undefined {
    const { offload } = this.options;
    if (offload === undefined || pipeline.freeJson === undefined || incoming.rawBody.length < OFFLOAD_BYTES) return undefined;
    if (jsonContentTypeProblem(incoming.header('content-type')) !== undefined) return undefined;
    return offload(incoming.rawBody, pipeline.freeJson).then((offloaded) => {
      if (offloaded !== undefined) incoming.offloaded = offloaded;
    });
  }

  /** Authentication and the work, as one unit of work, then the reply (or the family's error). */
  private answer(
    pipeline: Pipeline,
    request: IncomingMessage,
    response: ServerResponse,
    params: Record<string, string>,
    incoming: IncomingRequest,
  ): Promise<void> | undefined {
    let reply: Reply | Promise<Reply>;
    // Only the request log needs what the pipeline learnt; without it nothing is allocated for it.
    // With it, one object: the facts the log is told, filled in as the pipeline learns them.
    const seen: RouteFacts | undefined =
      this.options.observe === undefined
        ? undefined
        : { route: pipeline.info, principal: undefined, params, body: undefined, rawBody: incoming.rawBody, reply: NO_REPLY };
    try {
      const { unit } = this.options;
      reply = unit === undefined ? work(pipeline, incoming, params, seen) : unit(() => work(pipeline, incoming, params, seen));
    } catch (error) {
      this.reply(response, seen, this.failure(pipeline, request, response, incoming, error));
      return undefined;
    }
    if (reply instanceof Promise) {
      return reply.then(
        (settled) => this.reply(response, seen, settled),
        (error: unknown) => this.reply(response, seen, this.failure(pipeline, request, response, incoming, error)),
      );
    }
    this.reply(response, seen, reply);
    return undefined;
  }

  /** Sends the reply, telling {@link RouterOptions.observe} first (the request log). */
  private reply(response: ServerResponse, seen: RouteFacts | undefined, reply: Reply): void {
    if (seen !== undefined) {
      seen.reply = reply;
      this.options.observe?.(response, seen);
    }
    send(response, reply);
  }

  /** The reply to an exception of the work: its own reply, 503 when the store is away, else a logged 500. */
  private failure(pipeline: Pipeline, request: IncomingMessage, response: ServerResponse, incoming: IncomingRequest, error: unknown): Reply {
    if (error instanceof RequestError) return error.reply;
    if (error instanceof StoreUnavailableError) {
      return pipeline.errors.unavailable(
        `The sandbox cannot reach its database, so nothing was done: ${error.message}. Try again in ${error.retryAfterSeconds} s.`,
        error.retryAfterSeconds,
      );
    }
    this.options.log.error(`unexpected error ${pipeline.describe(incoming)} (${assignRequestId(request, response)})`, error);
    return pipeline.errors.internal();
  }

  /** Sandbox endpoints and pages: the body is always read, parsed when the handler asks. */
  private sandboxPipeline(errors: ErrorHelpers, handler: SandboxHandler): Pipeline {
    return {
      errors,
      readsBody: true,
      run: (incoming, _principal, params, seen) => handler(new SandboxRequestOf(incoming, params, errors, seen)),
      describe: (incoming) => `on ${incoming.method} ${this.logPath(incoming.pathname)}`,
    };
  }
}
