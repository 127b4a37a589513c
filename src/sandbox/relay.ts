/**
 * Connections relayed to a shared sandbox's writer (forward.ts): a forwarding process joins each
 * connection it accepts, byte for byte, to a connection of its own to the writer, and parses
 * nothing, so forwarding costs it little of the CPU the writer needs (the processes share the
 * machine's cores). Nothing in the writer depends on the client's address.
 *
 * What the relay does when the writer's side goes, so that a client sees what it would see from
 * one server, never a connection dropped under a request it could have been told to send again:
 * - **the writer cannot be reached** (its connection does not open): the request on the client's
 *   connection is answered 503 with `Retry-After`, in its family's error format (the request line
 *   names the path), and the connection ends;
 * - **the writer's side ends while a request waits for its answer** (the writer died under it):
 *   the same 503; the request is never sent again on its own, since the writer may have done it;
 * - **the writer's side ends while the connection is idle**: when the writer still accepts
 *   connections, it closed this one (its keep-alive timeout, `Connection: close`), and the client's
 *   side is ended the same way; when it does not (it died), the client's connection is kept, and
 *   its next request is joined to the writer then known, or answered 503. A kept connection that
 *   stays idle for {@link IDLE_MS} is closed. When this process took the writer's role meanwhile
 *   (or knows no writer), the connection is handed to its own HTTP server.
 *
 * Hand-written on node:net: a proxy library would parse HTTP (the cost this avoids) or hand back
 * a socket error where the contract wants its error format.
 */
import { connect, type Socket } from 'node:net';
import type { ErrorHelpers } from './errors.js';
import { newRequestId, rawErrorAnswer } from './io.js';
import { RETRY_AFTER_SECONDS, type TunnelTarget } from './tunnel-ends.js';
import { TunnelSocket } from './tunnel.js';

/** Where the writer listens, as this process connects to it. */
export type RelayTarget = TunnelTarget;

/** The writer's side of a relayed connection: a stream of the tunnel to it, or a connection of its own. */
type Upstream = Socket | TunnelSocket;

export { RETRY_AFTER_SECONDS };
/** Bytes kept of what the client sent and the writer did not answer yet (its request line within). */
const HEAD_LIMIT = 64 * 1024;
/** How long a relayed connection whose writer is unreachable waits for its request line. */
const LINE_WAIT_MS = 10_000;
/** How long a client's connection kept after its writer went may stay idle. */
const IDLE_MS = 5_000;

export const UNREACHABLE = "The shared sandbox's writer process cannot be reached (it may be stopping, or another is taking over).";

/** One client's connection, relayed. */
export class RelayedConnection {
  private upstream: Upstream | undefined;
  private connected = false;
  /** Bytes not yet written to the writer's connection (it is opening, or there is none now). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** What the client sent since the writer's last bytes (a request waiting for its answer). */
  private unanswered: Buffer[] = [];
  private unansweredBytes = 0;
  /** The writer could not be reached: the 503 goes once the request line is in. */
  private unreachable = false;
  private done = false;
  /** The client ended its side: the writer's side is ended once what came before is written. */
  private clientDone = false;

  private readonly listeners = {
    data: (chunk: Buffer) => this.fromClient(chunk),
    end: () => this.clientEnded(),
    error: () => this.socket.destroy(),
    close: () => {
      this.done = true;
      this.upstream?.destroy();
      this.onClose();
    },
  };

  constructor(
    private readonly socket: Socket,
    /** The writer now; undefined when this process serves (it took the role) or knows none. */
    private readonly targetOf: () => RelayTarget | undefined,
    private lastTarget: RelayTarget,
    private readonly errorsFor: (path: string) => ErrorHelpers,
    /** Gives a connection to this process's own HTTP server. */
    private readonly serveHere: (socket: Socket) => void,
    /** Opens the writer's side of a connection (tunnel-ends.ts). */
    private readonly open: (target: RelayTarget) => Upstream,
    private readonly onClose: () => void,
  ) {
    socket.setNoDelay(true);
    for (const [event, listener] of Object.entries(this.listeners)) socket.on(event, listener);
    this.join(lastTarget);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private join(target: RelayTarget): void {
    this.lastTarget = target;
    this.connected = false;
    this.unreachable = false;
    this.socket.setTimeout(0);
    const upstream = this.open(target);
    this.upstream = upstream;
    upstream.setNoDelay(true);
    upstream.once('connect', () => {
      if (this.upstream !== upstream) return;
      this.connected = true;
      for (const chunk of this.pending) upstream.write(chunk);
      this.pending = [];
      this.pendingBytes = 0;
      if (this.clientDone) upstream.end();
      else this.socket.resume();
    });
    upstream.on('data', (chunk: Buffer) => {
      this.unanswered = [];
      this.unansweredBytes = 0;
      if (!this.socket.write(chunk)) {
        upstream.pause();
        this.socket.once('drain', () => upstream.resume());
      }
    });
    upstream.on('drain', () => this.socket.resume());
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      if (this.upstream === upstream) this.upstreamGone(upstream);
    });
  }

  private fromClient(chunk: Buffer): void {
    if (this.unansweredBytes < HEAD_LIMIT) {
      this.unanswered.push(chunk);
      this.unansweredBytes += chunk.length;
    }
    if (this.upstream !== undefined && this.connected) {
      if (!this.upstream.write(chunk)) this.socket.pause();
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= HEAD_LIMIT) this.socket.pause();
    if (this.unreachable) this.answerWhenLineIn(false);
    else if (this.upstream === undefined) this.rejoin();
  }

  /** The client's next request, its writer gone: to the writer now, or to this process's server. */
  private rejoin(): void {
    const target = this.targetOf();
    if (target === undefined) this.handOver();
    else this.join(target);
  }

  /**
   * This process took the writer's role, or knows no writer: the connection goes to its own HTTP
   * server, what the client sent meanwhile first.
   */
  private handOver(): void {
    this.done = true;
    for (const [event, listener] of Object.entries(this.listeners)) this.socket.off(event, listener);
    this.socket.setTimeout(0);
    this.onClose();
    this.serveHere(this.socket);
    for (const chunk of this.pending.reverse()) this.socket.unshift(chunk);
    this.pending = [];
    this.socket.resume();
  }

  private clientEnded(): void {
    this.clientDone = true;
    if (this.unreachable) this.answerWhenLineIn(true);
    else if (this.upstream !== undefined && this.connected) this.upstream.end();
    else if (this.upstream === undefined) this.socket.end();
  }

  /** The writer's connection closed (or never opened). */
  private upstreamGone(upstream: Upstream): void {
    this.upstream = undefined;
    if (this.done) return;
    if (!this.connected) {
      // Never opened: the writer cannot be reached.
      this.unreachable = true;
      this.upstream = upstream;
      this.socket.setTimeout(LINE_WAIT_MS, () => this.socket.destroy());
      this.answerWhenLineIn(false);
      return;
    }
    this.connected = false;
    if (this.unansweredBytes > 0) {
      // A request waits for an answer the writer will not give.
      this.unavailable(this.unanswered);
      return;
    }
    // Idle: did the writer close this connection, or did it go? A tunnel's stream knows; a
    // connection of its own is told by whether the writer still accepts one.
    const settle = (alive: boolean) => {
      if (this.done || this.upstream !== undefined) return;
      if (alive && this.pendingBytes === 0) {
        this.socket.end();
        return;
      }
      // Kept for the client's next request (already in, or to come).
      if (this.pendingBytes > 0 || this.targetOf() === undefined) this.rejoin();
      else this.socket.setTimeout(IDLE_MS, () => this.socket.destroy());
    };
    if (upstream instanceof TunnelSocket) {
      settle(upstream.gone !== 'lost');
      return;
    }
    const target = this.targetOf() ?? this.lastTarget;
    const probe = connect({ host: target.host, port: target.port });
    probe.once('connect', () => {
      probe.destroy();
      settle(true);
    });
    probe.once('error', () => {
      probe.destroy();
      settle(false);
    });
  }

  private answerWhenLineIn(ended: boolean): void {
    if (!ended && this.pendingBytes < HEAD_LIMIT && !this.pending.some((chunk) => chunk.includes(10))) return;
    this.unavailable(this.pending);
  }

  /**
   * Answers the request that `head` starts: 503 in its family's format, then the connection ends
   * (it is the client's to open again).
   */
  private unavailable(head: Buffer[]): void {
    const text = Buffer.concat(head).toString('latin1');
    const end = text.indexOf('\r\n');
    const [method = 'GET', path = '/'] = (end >= 0 ? text.slice(0, end) : text).split(' ');
    const reply = this.errorsFor(path.startsWith('/') ? path : '/').unavailable(
      `${UNREACHABLE} Send the request again in ${RETRY_AFTER_SECONDS} s.`,
      RETRY_AFTER_SECONDS,
    );
    this.done = true;
    this.socket.removeAllListeners('data');
    this.socket.resume();
    this.socket.end(rawErrorAnswer('Service Unavailable', reply, newRequestId(), method));
  }
}
