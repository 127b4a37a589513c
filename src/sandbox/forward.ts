/**
 * Forwarding in a shared sandbox (`--database-url`, shared-role.ts): a process that is not the
 * writer passes every request to the writer, and the writer's answers back, as they come (the live
 * webhook stream too). Two ways:
 *
 * - **Connections relayed** ({@link Forwarder.relayConnections}, relay.ts): while the writer's
 *   address is known, each connection accepted is joined, byte for byte, to a connection of its
 *   own to the writer; this process parses nothing. relay.ts says what a client sees when the
 *   writer goes.
 * - **Requests forwarded** ({@link Forwarder.forward}): a connection accepted while no writer is
 *   known goes to this process's HTTP server, which sends each request, as it came (method, path
 *   and query, headers, body streamed), to the writer once it is known (shared-role.ts waits for
 *   it), over connections kept alive and reused; 503 as above when there is none.
 *
 * Hand-written on node:http and node:net rather than a proxy library: one fixed upstream, no
 * rewriting, no caching; what matters is the error answer in the contract's format, which a
 * library would leave to a callback anyway.
 */
import { Agent, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorHelpers } from './errors.js';
import { sendWithoutBody } from './io.js';
import { RelayedConnection, RETRY_AFTER_SECONDS, UNREACHABLE, type RelayTarget } from './relay.js';
import { TunnelDialer } from './tunnel-ends.js';

/** Where the writer listens, as this process connects to it. */
export type ForwardTarget = RelayTarget;

/** Headers of one hop, never passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export class Forwarder {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
  /** The connections relayed now, closed with the forwarder. */
  private readonly relayed = new Set<RelayedConnection>();
  /** The tunnel to the writer that relayed connections go over (tunnel-ends.ts). */
  private readonly tunnels = new TunnelDialer();

  constructor(
    /** The errors of the family a path belongs to. */
    private readonly errorsFor: (path: string) => ErrorHelpers,
  ) {}

  /** Sends `request` to `target` and relays its answer; 503 when `target` is undefined or unreachable. */
  forward(target: ForwardTarget | undefined, request: IncomingMessage, response: ServerResponse): void {
    if (target === undefined) {
      this.unavailable(request, response, 'The shared sandbox has no writer process right now (one is starting or taking over).');
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    const outgoing = httpRequest({ host: target.host, port: target.port, method: request.method, path: request.url, headers, agent: this.agent });
    outgoing.on('response', (answer) => {
      const relayed: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) relayed[name] = value;
      }
      response.writeHead(answer.statusCode ?? 502, relayed);
      // A streamed answer (the live webhook stream) goes out as it comes.
      if (answer.headers['content-type']?.startsWith('text/event-stream') === true) response.flushHeaders();
      answer.pipe(response);
      answer.on('error', () => response.destroy());
      response.on('close', () => {
        if (!answer.complete) answer.destroy();
      });
    });
    outgoing.on('error', () => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      this.unavailable(request, response, UNREACHABLE);
    });
    request.pipe(outgoing);
    request.on('error', () => outgoing.destroy());
    response.on('close', () => {
      if (!response.writableFinished) outgoing.destroy();
    });
  }

  /**
   * Relays each connection `server` accepts to `targetOf()`, the writer, when it is known; the
   * others go to the server's own handlers (its HTTP parser), as without this.
   */
  relayConnections(server: Server, targetOf: () => ForwardTarget | undefined): void {
    const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    const serveHere = (socket: Socket) => {
      for (const handler of handlers) handler.call(server, socket);
    };
    server.on('connection', (socket: Socket) => {
      const target = targetOf();
      if (target === undefined) {
        serveHere(socket);
        return;
      }
      const relayed = new RelayedConnection(
        socket,
        targetOf,
        target,
        this.errorsFor,
        serveHere,
        (to) => this.tunnels.open(to),
        () => this.relayed.delete(relayed),
      );
      this.relayed.add(relayed);
    });
  }

  /** Closes the kept connections and the relayed ones. */
  close(): void {
    this.agent.destroy();
    for (const relayed of this.relayed) relayed.destroy();
    this.relayed.clear();
    this.tunnels.close();
  }

  private unavailable(request: IncomingMessage, response: ServerResponse, why: string): void {
    sendWithoutBody(request, response, this.errorsFor(request.url ?? '/').unavailable(`${why} Send the request again in ${RETRY_AFTER_SECONDS} s.`, RETRY_AFTER_SECONDS));
  }
}
