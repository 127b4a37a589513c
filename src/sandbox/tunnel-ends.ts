/**
 * The two ends of a shared sandbox's tunnels (tunnel.ts): the writer accepts them, a forwarding
 * process opens one to the writer and carries every connection it relays over it (relay.ts).
 *
 * A tunnel is opened on the writer's own port, with HTTP's way of asking a server for a tunnel:
 * `CONNECT` (RFC 9110, 9.3.6), its `Paylater-Writer` header naming the process the forwarding
 * process takes for the writer. The writer answers 200 when it is that process and serves
 * (and frames follow), 503 with `Retry-After` in the sandbox's error format when it is not (it
 * was deposed, or another process listens there now); a `CONNECT` without the header is answered
 * 405. A forwarding process whose writer closes the connection without any answer (a version that
 * takes no tunnels, or a writer at its connection limit) relays that writer's connections one TCP
 * connection each, as before, for {@link DIRECT_MS}, then tries a tunnel again.
 *
 * Each stream of a tunnel is a connection of the writer's HTTP server, under its limits (a stream
 * over `--max-connections`, tunnels' and sockets' apart, is closed at once and counted as a
 * dropped connection) and timeouts.
 */
import type { IncomingMessage, Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { ErrorHelpers } from './errors.js';
import { newRequestId, rawErrorAnswer } from './io.js';
import { METHODS } from './router.js';
import { Tunnel, type TunnelSocket } from './tunnel.js';

/** The header of a tunnel's CONNECT that names the writer process it is meant for. */
const WRITER_HEADER = 'paylater-writer';
/** The CONNECT's target: the tunnel leads to the writer's HTTP server, not to a host. */
const AUTHORITY = 'writer.paylater.invalid:1';
/** Seconds a client is asked to wait when the writer cannot be reached (relay.ts), or is not the writer. */
export const RETRY_AFTER_SECONDS = 2;
/** How long a writer that answered a tunnel's CONNECT with nothing has its connections relayed one each. */
const DIRECT_MS = 30_000;

/** Where a forwarding process finds the writer. */
export interface TunnelTarget {
  host: string;
  port: number;
  /** The writer's process id (the processes' table); none: connections are relayed one each. */
  id?: string;
}

/** At the writer: takes the tunnels that forwarding processes open on `server`. */
export class TunnelAcceptor {
  private readonly tunnels = new Set<Tunnel>();
  private streams = 0;

  constructor(
    private readonly server: Server,
    /** Whether this process is now the writer named `id`. */
    private readonly isWriter: (id: string) => boolean,
    private readonly maxConnections: number,
    private readonly errors: ErrorHelpers,
  ) {
    server.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => this.connect(request, socket, head));
  }

  /** Ends every tunnel (the sandbox closes). */
  close(): void {
    for (const tunnel of this.tunnels) tunnel.destroy();
    this.tunnels.clear();
  }

  private connect(request: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => undefined);
    const id = request.headers[WRITER_HEADER];
    if (typeof id !== 'string') {
      socket.end(rawErrorAnswer('Method Not Allowed', this.errors.methodNotAllowed(['HEAD', ...METHODS]), newRequestId()));
      return;
    }
    if (!this.isWriter(id)) {
      const reply = this.errors.unavailable(
        `This process is not the shared sandbox's writer now. Send the request again in ${RETRY_AFTER_SECONDS} s.`,
        RETRY_AFTER_SECONDS,
      );
      socket.end(rawErrorAnswer('Service Unavailable', reply, newRequestId()));
      return;
    }
    socket.write('HTTP/1.1 200 Tunnel Established\r\n\r\n');
    const tunnel = new Tunnel({ socket, head, onOpen: (stream) => this.opened(stream), onEnd: () => this.tunnels.delete(tunnel) });
    this.tunnels.add(tunnel);
  }

  private opened(stream: TunnelSocket): void {
    if (this.streams >= this.maxConnections) {
      stream.destroy();
      this.server.emit('drop', {});
      return;
    }
    this.streams++;
    stream.once('close', () => this.streams--);
    this.server.emit('connection', stream);
  }
}

/** At a forwarding process: the tunnel to the writer, opened when first needed. */
export class TunnelDialer {
  private current: { key: string; tunnel: Tunnel } | undefined;
  /**
   * The writer that answered a tunnel's CONNECT with nothing, and until when its connections are
   * relayed one each: a version without tunnels, or a writer at its connection limit (which
   * closes a new connection as soon as it is accepted), so a tunnel is tried again after a while.
   */
  private direct: { key: string; until: number } | undefined;

  /** A connection to `target`'s HTTP server: a stream of the tunnel to it, or a TCP connection of its own. */
  open(target: TunnelTarget): Socket | TunnelSocket {
    const key = `${target.host}|${target.port}|${target.id ?? ''}`;
    if (target.id === undefined || (this.direct?.key === key && Date.now() < this.direct.until)) {
      return connect({ host: target.host, port: target.port });
    }
    if (this.current === undefined || this.current.key !== key || this.current.tunnel.closed) {
      this.current?.tunnel.retire();
      this.current = { key, tunnel: this.dial(target, target.id, key) };
    }
    return this.current.tunnel.open();
  }

  close(): void {
    this.current?.tunnel.destroy();
    this.current = undefined;
  }

  private dial(target: TunnelTarget, id: string, key: string): Tunnel {
    const tunnel = new Tunnel({
      socket: connect({ host: target.host, port: target.port }),
      handshake: `CONNECT ${AUTHORITY} HTTP/1.1\r\nHost: ${AUTHORITY}\r\nPaylater-Writer: ${id}\r\n\r\n`,
      onEnd: () => {
        if (tunnel.connected && !tunnel.answered) this.direct = { key, until: Date.now() + DIRECT_MS };
        if (this.current?.tunnel === tunnel) this.current = undefined;
      },
    });
    return tunnel;
  }
}
