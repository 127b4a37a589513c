/**
 * The stateful sandbox: one local HTTP server that behaves like the pay-later service for every
 * API family, with a virtual clock, webhook delivery and sandbox-only endpoints to act as the user.
 *
 *   const sandbox = await createSandbox({ config: { partner: { webhookUrl } } });
 *   await sandbox.listen(0);          // a free port; sandbox.url tells which
 *   ...
 *   await sandbox.close();
 */
import { createServer, IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SLICE_MS, VirtualClock, WRITER_SLICE_MS } from './clock.js';
import { ConfigError, ENVIRONMENT, partnerWebhookUrls, resolveConfig, type ConfigOverrides, type SandboxConfig } from './config.js';
import { limitConnections, TurnBatches } from './connections.js';
import type { FamilyContext, RegisterFamily, SandboxMethod } from './context.js';
import { registerControl } from './control.js';
import { DeliveryDispatcher } from './delivery/index.js';
import { announcedAddress, isListeningAddress } from './webhook-targets.js';
import { familyInfo } from '../contract/families.js';
import { errorHelpers, type ErrorHelpers } from './errors.js';
import { registerExtras } from './families/extras.js';
import { registerGateway } from './families/gateway.js';
import { registerSdk } from './families/sdk.js';
import { registerWeb } from './families/web.js';
import { registerDashboard } from './pages/dashboard.js';
import { landingPage } from './pages/landing.js';
import { RequestLog } from './request-log.js';
import { assignRequestId, newRequestId, Router, type Logger, type RouteInfo } from './router.js';
import { consoleLogger } from './console-logger.js';
import { KeptAnswer, rawErrorAnswer } from './io.js';
import { MemoryStore, type Store } from './store.js';
import { loadContract, type FamilyName } from './validation.js';
import { WebhookStream } from './webhook-stream.js';
import { SandboxAccess } from './access.js';
import type { SandboxRouteOptions } from './context.js';
import { FairTurns } from './fair-turns.js';
import { JsonOffload } from './json-offload.js';
import { Forwarder } from './forward.js';
import type { Role, SharedRole } from './shared-role.js';
import { startRoleCheck, type RoleCheck } from './role-check.js';
import { MAX_JSON_DEPTH } from '../http/json.js';

/** The log a sandbox writes when no logger is given (console-logger.ts). */
export { consoleLogger };

/**
 * The module that serves each family of the contract (src/contract/families.ts), registered in
 * this order; a family of the contract missing here fails `tsc`. Each answers errors in its
 * family's format (`errorFormat` of the family's row).
 */
export const FAMILY_MODULES = {
  sdk: registerSdk,
  web: registerWeb,
  extras: registerExtras,
  gateway: registerGateway,
} as const satisfies Record<FamilyName, RegisterFamily>;

/** The families the sandbox serves, in the order of {@link FAMILY_MODULES}. */
const SERVED = Object.keys(FAMILY_MODULES) as FamilyName[];

export interface SandboxOptions {
  /** Settings over the documented defaults (environment variables are read only when `env` is given). */
  config?: ConfigOverrides;
  /** Environment variables to read (the CLI passes `process.env`); default: none. */
  env?: Record<string, string | undefined>;
  /** Default: a new in-memory store. */
  store?: Store;
  /**
   * Keep the state in this PostgreSQL database (`postgres://...`), shared by every sandbox process
   * started with the same URL (postgres/store.ts). Overrides `store`.
   */
  databaseUrl?: string;
  /** Default: a new virtual clock at the real time. */
  clock?: VirtualClock;
  /** Default: console, prefixed `sandbox:`. */
  logger?: Logger;
  /** Log one line per request (method, path without query, status, duration). */
  logRequests?: boolean;
  /**
   * Keep the latest requests for the dashboard (request-log.ts), within `limits.requestLogBytes`;
   * default on. Off, `GET /sandbox/requests` answers 404 saying so.
   */
  requestLog?: boolean;
  /** Which families to serve; default every one of {@link FAMILY_MODULES}. */
  families?: readonly FamilyName[];
  /** The fetch used for webhook deliveries (default: the global fetch). */
  fetch?: typeof fetch;
  /** How long a client may take to send a request; an expired one is answered 408. */
  timeouts?: {
    /** To send the request line and headers; default 30 000 ms. */
    headersMs?: number;
    /** To send the whole request, headers and body; default 60 000 ms. */
    requestMs?: number;
    /** How often the timeouts are checked; default 5 000 ms (so a 408 comes at most this late). */
    checkIntervalMs?: number;
  };
}

export interface Sandbox {
  /** `http://host:port` once listening (throws before). */
  readonly url: string;
  /** Starts listening; default port and host from the configuration. Resolves to `url`. */
  listen(port?: number, host?: string): Promise<string>;
  /** Stops webhook deliveries and timers, closes every connection and the server. */
  close(): Promise<void>;
  readonly clock: VirtualClock;
  readonly store: Store;
  readonly deliveries: DeliveryDispatcher;
  readonly config: SandboxConfig;
  /** Who may use the /sandbox/ endpoints (access.ts): hosted or not, and the operator's token. */
  readonly access: SandboxAccess;
  readonly server: Server;
  /** Every route served (contract operations and sandbox endpoints). */
  readonly routes: readonly RouteInfo[];
  /** Where the state is kept, for a person: in memory, or the shared database (without its password). */
  readonly stateDescription: string;
  /**
   * In memory: `memory`. Shared: whether this process is the writer (it serves every request) or
   * forwards to it (shared-role.ts).
   */
  readonly role: 'memory' | Role;
  /** The role check's `http://host:port` once listening, with `rolePort` set (role-check.ts). */
  readonly roleCheckUrl: string | undefined;
}

export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const config = resolveConfig(options.config, options.env);
  const log = options.logger ?? consoleLogger;
  const shared = options.databaseUrl === undefined ? undefined : await sharedStore(options.databaseUrl, log);
  const store: Store = shared ?? options.store ?? new MemoryStore();
  const clock =
    options.clock ?? new VirtualClock({ onError: (error) => log.error('a scheduled task failed', error) });
  // The timers that real time brings due, and each slice of an advance, fire in units of work; a
  // shared writer's slices are shorter (its turns also make the statements that write them).
  clock.setRunner((fire) => store.unit(fire), store.shared ? WRITER_SLICE_MS : SLICE_MS);
  const deliveries = new DeliveryDispatcher({
    clock,
    log: (level, message) => log[level](message),
    config,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const sandboxErrors = errorHelpers('apiError');
  // The requests answered, for the dashboard (request-log.ts); paths shown as the log line shows them.
  const requestLog: RequestLog | undefined =
    options.requestLog === false
      ? undefined
      : new RequestLog({ byteLimit: config.limits.requestLogBytes, clock, logPath: (path: string): string => router.logPath(path) });
  // Large bodies with free values (notes, pushed data) are parsed off the event loop (json-offload.ts).
  const offload = new JsonOffload();
  const offloadLimits = { maxDepth: MAX_JSON_DEPTH, jsonMembers: config.limits.jsonMembers, jsonDepth: config.limits.jsonDepth };
  // Requests taken in turns across connections, a slice of time a turn (fair-turns.ts).
  const turns = new FairTurns();
  const router: Router = new Router({
    bodyLimit: config.bodyLimit,
    offload: (bytes, pointers) => offload.parse(bytes, pointers, offloadLimits),
    log,
    fallbackErrors: sandboxErrors,
    ...(requestLog === undefined ? {} : { observe: requestLog.observe }),
    unit: <T>(work: () => T) => store.unit(work),
    resume: (request, work) => turns.resume(request.socket, work),
  });
  // Hosted, every /sandbox/ endpoint but the shopper's pages' own needs a credential (access.ts).
  const access = new SandboxAccess(config, sandboxErrors);
  const sandboxRoute = (method: SandboxMethod, path: string, handler: Parameters<Router['addSandbox']>[3], options: SandboxRouteOptions = {}) =>
    router.addSandbox(
      sandboxErrors,
      method,
      path,
      options.shopper === true || !access.hosted
        ? handler
        : (request) => {
            const identified = access.identify(request);
            if (!identified.ok) return identified.reply;
            access.remember(request, identified.principal);
            return handler(request);
          },
    );
  // Pages outside /sandbox/ and the contract: the landing page and the hosted checkout page (web).
  const pageRoute = (path: string, handler: Parameters<Router['addPage']>[2]) => router.addPage(sandboxErrors, path, handler);

  let url: string | undefined;
  const publicUrl = (): string => {
    const base = config.publicUrl ?? url;
    if (base === undefined) throw new Error('the sandbox is not listening yet');
    return base.replace(/\/+$/, '');
  };

  registerControl({ sandboxRoute, clock, deliveries, errors: sandboxErrors, access });
  registerDashboard({ sandboxRoute, pageRoute, requestLog, errors: sandboxErrors, access });
  // GET /sandbox/webhooks/stream streams its answer, so it is served before the router (webhook-stream.ts).
  const webhookStream = new WebhookStream(deliveries, sandboxErrors, undefined, access);
  pageRoute('/', () => landingPage(options.families ?? SERVED));

  const wanted = options.families ?? SERVED;
  for (const family of SERVED) {
    if (!wanted.includes(family)) continue;
    const contract = await loadContract(family);
    const errors = errorHelpers(familyInfo(family).errorFormat);
    const ctx: FamilyContext = {
      family,
      contract,
      errors,
      sandboxErrors,
      route: (operationId, route) => router.addOperation(family, contract, errors, operationId, route),
      sandboxRoute,
      pageRoute,
      store,
      clock,
      deliveries,
      config,
      access,
      publicUrl,
      log,
    };
    FAMILY_MODULES[family](ctx);
  }
  const unknown = wanted.filter((family) => !Object.hasOwn(FAMILY_MODULES, family));
  if (unknown.length > 0) throw new Error(`no sandbox module for the family ${unknown.join(', ')}`);

  let role: SharedRole | undefined;
  if (shared !== undefined) {
    // Every family observes its collections now: reading the records rebuilds what they derive.
    shared.attachClock(clock);
    // One writer delivers every webhook: a pending delivery another process recorded is its
    // predecessor's, taken over (delivery/journal.ts).
    deliveries.share(shared, shared.processId, () => Promise.resolve(new Set([shared.processId])));
    const { SharedRole } = await import('./shared-role.js');
    role = new SharedRole({
      url: shared.url,
      store: shared,
      forwarder: new Forwarder((path) => router.errorsForPath(path)),
      log,
      onDeposed: () => {
        clock.stop();
        void deliveries.stop();
        shared.release();
      },
    });
    try {
      await role.start();
    } catch (error) {
      clock.stop();
      await deliveries.stop();
      await role.close();
      await shared.close();
      throw new ConfigError(`The shared sandbox cannot start: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const logLine = (method: string, url: string, status: number, elapsedMs: number, requestId: string) => {
    log.info(`${method} ${router.logPath(url)} ${status} ${Math.round(elapsedMs)} ms ${requestId}`);
  };
  // The one listener an answer gets, shared by every answer (no closure per request), and only
  // when something is logged: once the answer is handed to the system, its log line and its entry
  // in the request log.
  const logged = options.logRequests === true || requestLog !== undefined;
  function sent(this: TimedResponse): void {
    const { req: request } = this;
    const requestId = assignRequestId(request, this);
    const elapsedMs = performance.now() - this.started;
    if (options.logRequests === true) logLine(request.method ?? '-', request.url ?? '/', this.statusCode, elapsedMs, requestId);
    requestLog?.finish(request, this, elapsedMs, requestId);
  }

  const timeouts = options.timeouts ?? {};
  // Typed as a plain Server for the sandbox's users: TimedResponse is what it answers with.
  const server = createServer<typeof IncomingMessage, typeof TimedResponse>(
    {
      requestTimeout: timeouts.requestMs ?? 60_000,
      headersTimeout: timeouts.headersMs ?? 30_000,
      connectionsCheckingInterval: timeouts.checkIntervalMs ?? 5_000,
      // A request without Host is answered by the router in the family's format, not by Node's bare 400.
      requireHostHeader: false,
      ServerResponse: TimedResponse,
    },
    function handle(request: IncomingMessage, response: TimedResponse): void {
      // Shared, on a process that is not the writer: every request is the writer's to answer.
      if (role !== undefined && !role.serving) {
        role.forward(request, response, () => handle(request, response));
        return;
      }
      // The answer under way on the connection, so that a timeout is answered in its family's
      // format: a field of the socket, replaced by the next request's answer (no map, no listener).
      (request.socket as AnsweringSocket)[ANSWERING] = response;
      if (logged) response.on('finish', sent);
      // Taken in turns with the other connections' requests, a slice of time a turn (fair-turns.ts).
      // A request under way (its body, the database) keeps the connection's next ones waiting.
      turns.run(request.socket, () => {
        if (!webhookStream.claims(request)) return router.handle(request, response);
        // The stream writes its own head: the request id goes in first.
        response.setHeader('X-Request-Id', assignRequestId(request, response));
        webhookStream.handle(request, response);
        return undefined;
      });
    },
  ) as unknown as Server;

  // An answer may come later than its request's read: a body, a clock advance in slices, the
  // requests before it on the connection (fair-turns.ts), the shared store's database. A client that
  // ends its side of the connection once its requests are sent (`nc`, HTTP/1.0 tools) still gets
  // every answer: Node's HTTP server then ends the connection after the last one instead of at once
  // (its `httpAllowHalfOpen`). Without it, a pipelined read after an advance was dropped when the
  // client's end came in before the advance was answered.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Shared, while this process forwards: its connections are relayed to the writer as they are.
  role?.relayConnections(server);
  role?.acceptTunnels(server, config.maxConnections, sandboxErrors);

  // A request Node cannot parse, or one that is not received in time, never reaches (or leaves) the
  // router; it gets a short JSON answer written here: 408 for a timeout (in the family's format when
  // the request line was read), 431 for headers over Node's limit, 400 otherwise.
  limitConnections(
    server,
    config.maxConnections,
    (message) => log.warn(message),
    `Raise the limit with --max-connections N or ${ENVIRONMENT.maxConnections}.`,
  );
  // Requests that expired together are answered a few per turn of the event loop (connections.ts).
  const timeoutAnswers = new TurnBatches();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') timeoutAnswers.add(() => answerClientError(error, socket));
    else answerClientError(error, socket);
  });
  function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // The connection's latest answer, unless it was finished (the connection waits for its next request).
    const latest = (socket as AnsweringSocket)[ANSWERING];
    if (latest !== undefined) (socket as AnsweringSocket)[ANSWERING] = undefined;
    const current = latest === undefined || latest.writableFinished ? undefined : latest;
    if (current !== undefined && current.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = current === undefined ? newRequestId() : assignRequestId(current.req, current);
    const errors: ErrorHelpers = current === undefined ? sandboxErrors : router.errorsForPath(current.req.url ?? '/');
    let status: 400 | 408 | 431;
    let code: 'BAD_REQUEST' | 'REQUEST_TIMEOUT' | 'HEADERS_TOO_LARGE';
    let reason: string;
    let text: string;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      code = 'REQUEST_TIMEOUT';
      reason = 'Request Timeout';
      text =
        current === undefined
          ? `The request line and headers were not received within ${duration(timeouts.headersMs ?? 30_000)}.`
          : `The request body was not received in full within ${duration(timeouts.requestMs ?? 60_000)}; send the whole body (as many bytes as Content-Length says).`;
    } else if (error.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      code = 'HEADERS_TOO_LARGE';
      reason = 'Request Header Fields Too Large';
      text = 'The request headers exceed the limit of 16 KiB.';
    } else {
      status = 400;
      code = 'BAD_REQUEST';
      reason = 'Bad Request';
      text = 'The request is not valid HTTP/1.1.';
    }
    // D250: each condition its code, with the status the answer carries.
    socket.end(rawErrorAnswer(reason, errors.error(status, code, text), requestId));
    if (options.logRequests !== true) return;
    if (current === undefined) logLine('-', '-', status, 0, requestId);
    else logLine(current.req.method ?? '-', current.req.url ?? '/', status, performance.now() - current.started, requestId);
  }

  let closed = false;
  let roleCheck: RoleCheck | undefined;
  return {
    get url() {
      if (url === undefined) throw new Error('the sandbox is not listening yet');
      return url;
    },
    async listen(port = config.port, host = config.host) {
      await new Promise<void>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      url = `http://${urlHost(host, address)}:${address.port}`;
      // Webhooks to the sandbox itself are refused; the partner's URL is checked again now.
      const listening = { address: address.address, port: address.port, publicUrl: config.publicUrl };
      deliveries.listeningAt(listening);
      // Shared: every live process refuses webhooks to every other (each registers where it listens).
      role?.processes.announce(announcedAddress(listening), (others) => deliveries.targets.othersAt(others.filter(isListeningAddress)));
      for (const { url: target, name } of partnerWebhookUrls(config)) {
        const problem = deliveries.targetProblem(target);
        if (problem === undefined) continue;
        await new Promise<void>((resolve) => server.close(() => resolve()));
        throw new ConfigError(`${name} ${problem.message}`);
      }
      if (config.rolePort !== undefined) {
        roleCheck = await startRoleCheck(() => role?.role ?? 'memory', config.rolePort, host).catch(async (error: unknown) => {
          await new Promise<void>((resolve) => server.close(() => resolve()));
          throw error;
        });
      }
      return url;
    },
    get roleCheckUrl() {
      return roleCheck?.url;
    },
    async close() {
      if (closed) return;
      closed = true;
      clock.stop();
      await webhookStream.close();
      await deliveries.stop();
      if (server.listening) {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // The connections relayed to the writer are not the HTTP server's to close. The tunnels
          // go first: a forwarding process then keeps its idle clients' connections for the next
          // writer, as when a writer dies, where closing each stream would end them.
          role?.closeConnections();
          server.closeAllConnections();
        });
      }
      await roleCheck?.close();
      await shared?.close();
      await role?.close();
      await offload.close();
    },
    clock,
    store,
    deliveries,
    config,
    access,
    server,
    routes: router.list(),
    stateDescription:
      shared === undefined ? 'in memory (lost when the sandbox stops)' : `PostgreSQL ${shared.description} (shared, kept across restarts)`,
    get role() {
      return role?.role ?? 'memory';
    },
  };
}

/** An answer of the sandbox's server, with the time its request arrived (for the log line). */
class TimedResponse extends KeptAnswer {
  readonly started = performance.now();
}

/** Where a connection keeps its latest answer (server.ts alone reads and writes it). */
const ANSWERING = Symbol('answering');
type AnsweringSocket = Socket & { [ANSWERING]?: TimedResponse | undefined };

/** The shared store of `databaseUrl`; `pg` is loaded only for it. */
async function sharedStore(databaseUrl: string, log: Logger) {
  const { checkDatabaseUrl, DatabaseUrlError } = await import('./postgres/database-url.js');
  let url: string;
  try {
    url = checkDatabaseUrl(databaseUrl);
  } catch (error) {
    if (error instanceof DatabaseUrlError) throw new ConfigError(error.message);
    throw error;
  }
  const { PostgresStore } = await import('./postgres/store.js');
  return new PostgresStore({ url, log: { warn: (message) => log.warn(message), error: (message) => log.error(message) } });
}

/** `300 ms`, `30 s`. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** The host to write in URLs: a wildcard address becomes the loopback one. */
function urlHost(host: string, address: AddressInfo): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  const actual = host === 'localhost' ? host : address.address;
  return actual.includes(':') ? `[${actual}]` : actual;
}
