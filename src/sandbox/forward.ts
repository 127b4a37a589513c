/**
 * Forwarding in a shared sandbox (`--database-url`, shared-role.ts): a process that is not the
 * writer sends each request, as it came (method, path and query, headers, body streamed), to the
 * writer, and relays the writer's answer as it comes (status, headers, body streamed: the live
 * webhook stream too). Connections to the writer are kept alive and reused.
 *
 * When the writer cannot be reached (none yet, or it died and another is taking over), the request
 * is answered 503 with `Retry-After`, in its family's error format, saying to send it again.
 *
 * Hand-written on node:http rather than a proxy library: one fixed upstream, no rewriting, no
 * caching; what matters is the error answer in the contract's format, which a library would leave
 * to a callback anyway.
 */
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ErrorHelpers } from './errors.js';
import { sendWithoutBody } from './io.js';

/** Where the writer listens, as this process connects to it. */
export interface ForwardTarget {
  host: string;
  port: number;
}

/** Seconds a client is asked to wait when the writer cannot be reached. */
const RETRY_AFTER_SECONDS = 2;

/** Headers of one hop, never passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export class Forwarder {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });

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
      this.unavailable(request, response, 'The shared sandbox\'s writer process cannot be reached (it may be stopping, or another is taking over).');
    });
    request.pipe(outgoing);
    request.on('error', () => outgoing.destroy());
    response.on('close', () => {
      if (!response.writableFinished) outgoing.destroy();
    });
  }

  /** Closes the kept connections. */
  close(): void {
    this.agent.destroy();
  }

  private unavailable(request: IncomingMessage, response: ServerResponse, why: string): void {
    const reply = this.errorsFor(request.url ?? '/').error(503, 'SERVICE_UNAVAILABLE', `${why} Send the request again in ${RETRY_AFTER_SECONDS} s.`);
    sendWithoutBody(request, response, { ...reply, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
  }
}
