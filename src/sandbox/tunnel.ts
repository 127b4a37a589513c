/**
 * A tunnel: many client connections carried over one TCP connection between a forwarding process
 * of a shared sandbox and its writer (tunnel-ends.ts opens and accepts it). Each client
 * connection is a {@link TunnelSocket} at both ends, a Duplex stream: at the writer it is handed
 * to the HTTP server as a connection of its own (Node's documented `'connection'` injection, any
 * Duplex), so the writer parses, limits and times it as any connection; at the forwarding process
 * it is what the client's bytes are joined to (relay.ts). The bytes are the client's, as they came.
 *
 * Why not a TCP connection a client connection, as before: on two shared cores each relayed
 * request then cost the writer a read and a write of its own and two more wake-ups of a process,
 * and two processes answered 0.76 of one. Over a tunnel the answers one database commit released
 * go out in one write ({@link Tunnel.frame}), and the writer reads many requests in one read.
 *
 * The frames: a 9-byte header (type, stream id, payload length, big-endian) and the payload.
 * - OPEN: the forwarding process accepted a connection (ids are its own, never reused while open);
 * - DATA: bytes of the stream, at most {@link MAX_PAYLOAD} a frame;
 * - END: the sender will send no more bytes on the stream (its side ended; the other may go on);
 * - CLOSE: the sender destroyed the stream: the other end destroys its side;
 * - PAUSE / RESUME: the sender's reader holds more than its high-water mark of the stream's bytes
 *   (its client, or the writer's parser, is slow): the other end stops writing that stream's bytes
 *   until RESUME, so one slow client never holds up the others or fills a process's memory.
 * A stream's writes also wait while the tunnel's own connection is congested.
 *
 * Hand-written: a stream multiplexer library brings a protocol of its own sized for peers that do
 * not trust each other (yamux, mplex: windows, keep-alives, negotiation); here both ends are one
 * program, and the whole protocol is these six frames. HTTP/2 would make every relayed request a
 * request of its own to parse, build and answer again, the cost the byte relay was chosen to avoid.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** The frames' types (the header's first byte). */
const FRAME = Object.freeze({ OPEN: 1, DATA: 2, END: 3, CLOSE: 4, PAUSE: 5, RESUME: 6 });
const HEADER = 9;
/** The largest payload of a frame; a longer write goes as several frames. */
export const MAX_PAYLOAD = 64 * 1024;
/**
 * The most a stream may hold unread after asking the other end to pause: frames sent before the
 * PAUSE arrived, at most one write of the other end's (the sandbox writes a large answer in pieces
 * of 64 KiB); past it the other end is not keeping the protocol and the tunnel is ended.
 */
const MAX_UNREAD = 16 * 1024 * 1024;
/** When TCP starts probing an idle tunnel's connection. */
const KEEP_ALIVE_MS = 10_000;
const EMPTY = Buffer.alloc(0);

/** Why a stream's other side went. */
export type StreamEnd = 'closed' | 'lost';

/** One client connection inside a tunnel, at either end. */
export class TunnelSocket extends Duplex {
  /** Set when the stream went: `closed` by the other end, `lost` with the tunnel. */
  gone: StreamEnd | undefined;
  /** The peer asked for no more of this stream's bytes (PAUSE) until RESUME. */
  private peerPaused = false;
  /** The other end sent END or CLOSE: no more of its bytes are read. */
  private peerEnded = false;
  /** This end asked the peer to pause (its readable buffer is full). */
  private askedPause = false;
  private heldWrite: ((error?: Error) => void) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly tunnel: Tunnel,
    readonly id: number,
    /**
     * At the writer, a side the client ended stays open for the answers (the HTTP server ends it);
     * at the forwarding process, the writer's end ends the stream, as a socket's does.
     */
    allowHalfOpen: boolean,
  ) {
    super({ allowHalfOpen });
  }

  /** Bytes from the other end. */
  received(payload: Buffer): void {
    this.touch();
    if (this.peerEnded || this.gone !== undefined) return;
    if (this.push(payload)) return;
    if (!this.askedPause) {
      this.askedPause = true;
      this.tunnel.frame(FRAME.PAUSE, this.id, EMPTY);
    } else if (this.readableLength > MAX_UNREAD) {
      // The other end goes on past a PAUSE by more than any one write of its own can: it does not
      // keep the protocol, and its bytes would fill this process's memory.
      this.tunnel.destroy();
    }
  }

  peer(type: number): void {
    if (type === FRAME.END) {
      this.peerEnded = true;
      this.push(null);
    } else if (type === FRAME.PAUSE) {
      this.peerPaused = true;
    } else if (type === FRAME.RESUME) {
      this.peerPaused = false;
      this.release();
    } else if (type === FRAME.CLOSE) {
      // As a TCP connection's close: what arrived is still read, then the end; a write fails.
      this.gone = 'closed';
      this.heldWrite?.(new Error('The other end closed the stream.'));
      this.heldWrite = undefined;
      if (!this.peerEnded) this.push(null);
      this.peerEnded = true;
      if (this.readableEnded || this.readableLength === 0) this.destroy();
      else this.once('end', () => this.destroy());
    }
  }

  /**
   * Lets a write held by a pause or a congested tunnel complete; one still held waits for the
   * other end's RESUME (which calls this again) or the tunnel's next drain.
   */
  release(): void {
    const held = this.heldWrite;
    if (held === undefined || this.peerPaused) return;
    if (this.tunnel.congested) {
      this.tunnel.holding(this);
      return;
    }
    this.heldWrite = undefined;
    this.tunnel.afterFlush(held);
  }

  override _read(): void {
    if (this.askedPause) {
      this.askedPause = false;
      this.tunnel.frame(FRAME.RESUME, this.id, EMPTY);
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.closedByPeer(done)) return;
    this.send(chunk);
    this.wait(done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    if (this.closedByPeer(done)) return;
    for (const { chunk } of chunks) this.send(chunk);
    this.wait(done);
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.gone === undefined) this.tunnel.frame(FRAME.END, this.id, EMPTY);
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    clearTimeout(this.idleTimer);
    // A stream both of whose sides ended went cleanly (END each way): the other end's goes by
    // itself, and a CLOSE would discard what its reader has not read yet.
    if (this.gone === undefined && !(this.readableEnded && this.writableFinished)) this.tunnel.frame(FRAME.CLOSE, this.id, EMPTY);
    this.tunnel.forget(this);
    this.heldWrite = undefined;
    done(error);
  }

  /**
   * As a socket's: 'timeout' after `ms` without bytes either way (0: never), and again after as
   * long from the next bytes; the timer does not keep the process alive.
   */
  setTimeout(ms: number, callback?: () => void): this {
    if (callback !== undefined && ms > 0) this.once('timeout', callback);
    else if (callback !== undefined) this.off('timeout', callback);
    clearTimeout(this.idleTimer);
    this.idleTimer = ms > 0 ? setTimeout(() => this.emit('timeout'), ms).unref() : undefined;
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  /** A write after the other end closed the stream fails, as one on a closed socket does. */
  private closedByPeer(done: (error?: Error | null) => void): boolean {
    if (this.gone === undefined) return false;
    done(new Error('The other end closed the stream.'));
    return true;
  }

  private send(chunk: Buffer): void {
    this.touch();
    for (let at = 0; at < chunk.length; at += MAX_PAYLOAD) this.tunnel.frame(FRAME.DATA, this.id, chunk.subarray(at, at + MAX_PAYLOAD));
  }

  /** Completes a write once its frames are handed to the tunnel's connection, or later if held. */
  private wait(done: (error?: Error) => void): void {
    if (!this.peerPaused && !this.tunnel.congested) this.tunnel.afterFlush(done);
    else {
      this.heldWrite = done;
      this.tunnel.holding(this);
    }
  }

  private touch(): void {
    this.idleTimer?.refresh();
  }
}

/** How a tunnel's end is made (tunnel-ends.ts). */
export interface TunnelOptions {
  socket: Socket;
  /** At the writer: a stream the forwarding process opened. Undefined at the forwarding process. */
  onOpen?: (stream: TunnelSocket) => void;
  /** The tunnel's connection ended (its streams went with it, `lost`). */
  onEnd: () => void;
  /** At the writer: what came after the CONNECT request's head. */
  head?: Buffer;
  /**
   * At the forwarding process: the CONNECT request to write first. Frames wait until it is
   * answered 200; any other answer (or none) ends the tunnel.
   */
  handshake?: string;
}

/** The longest answer head to a tunnel's CONNECT that is read. */
const ANSWER_HEAD_MAX = 8 * 1024;

/** The frames of a tunnel over `socket`, in both directions. */
export class Tunnel {
  private readonly streams = new Map<number, TunnelSocket>();
  private readonly held = new Set<TunnelSocket>();
  private readonly socket: Socket;
  private outgoing: Buffer[] = [];
  /** Writes of streams whose frames are in `outgoing`: completed once those are written. */
  private written: (() => void)[] = [];
  private flushScheduled = false;
  private incoming: Buffer = EMPTY;
  private ended = false;
  private nextId = 1;
  private retired = false;
  /** Frames flow (the CONNECT was answered 200, or this is the writer's end). */
  private up: boolean;
  /** The writer answered the CONNECT at all (with any bytes). */
  answered = false;
  /** The tunnel's TCP connection opened. */
  connected = false;

  constructor(private readonly options: TunnelOptions) {
    const { socket } = options;
    this.socket = socket;
    this.up = options.handshake === undefined;
    socket.setNoDelay(true);
    if (options.handshake !== undefined) {
      socket.once('connect', () => {
        this.connected = true;
      });
      socket.write(options.handshake);
    } else {
      this.connected = true;
      this.answered = true;
    }
    socket.on('data', (chunk: Buffer) => (this.up ? this.read(chunk) : this.readAnswer(chunk)));
    socket.on('drain', () => {
      const held = [...this.held];
      this.held.clear();
      for (const stream of held) stream.release();
    });
    // A peer gone without a word (its machine, the network) is found by TCP's keep-alive probes.
    socket.setKeepAlive(true, KEEP_ALIVE_MS);
    socket.on('error', () => undefined);
    // The other end ended the tunnel (an HTTP server's socket stays half open by itself).
    socket.on('end', () => this.destroy());
    socket.on('close', () => this.lost());
    if (options.head !== undefined && options.head.length > 0) this.read(options.head);
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Whether the tunnel's connection holds more than its high-water mark unsent. */
  get congested(): boolean {
    return this.socket.writableNeedDrain;
  }

  /**
   * At the forwarding process: a new stream, opened at the writer. It emits 'connect' once frames
   * flow (at once when they do), as a socket does; it goes, `lost`, when the tunnel never opens.
   */
  open(): TunnelSocket {
    const stream = new TunnelSocket(this, this.nextId, false);
    this.nextId = this.nextId >= 0xffff_fffe ? 1 : this.nextId + 1;
    this.streams.set(stream.id, stream);
    this.frame(FRAME.OPEN, stream.id, EMPTY);
    if (this.up) process.nextTick(() => stream.emit('connect'));
    return stream;
  }

  /** Ends the tunnel: every stream goes, `lost`. */
  destroy(): void {
    this.socket.destroy();
    this.lost();
  }

  /**
   * Queues a frame; what was queued by one callback and the promises it settled is written at
   * once, as one write, when they are done (process.nextTick). Not at the end of the event loop's
   * turn (setImmediate): that held every answer over a tunnel until the turn's other callbacks
   * ran, a millisecond or more under load, where an answer on a socket of its own leaves at once.
   */
  frame(type: number, id: number, payload: Buffer): void {
    if (this.ended) return;
    const header = Buffer.allocUnsafe(HEADER);
    header[0] = type;
    header.writeUInt32BE(id, 1);
    header.writeUInt32BE(payload.length, 5);
    this.outgoing.push(header);
    if (payload.length > 0) this.outgoing.push(payload);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(this.flush);
  }

  /**
   * Calls `done` once the frames queued until now are handed to the connection (a stream's write
   * completes then, so that its chunk is not read after the writer may reuse it).
   */
  afterFlush(done: () => void): void {
    this.written.push(done);
    this.schedule();
  }

  forget(stream: TunnelSocket): void {
    this.streams.delete(stream.id);
    this.held.delete(stream);
    if (this.retired && this.streams.size === 0) this.destroy();
  }

  /** No more streams will be opened on this tunnel: it ends once its last stream went. */
  retire(): void {
    this.retired = true;
    if (this.streams.size === 0) this.destroy();
  }

  holding(stream: TunnelSocket): void {
    this.held.add(stream);
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (!this.up || this.ended) return;
    const frames = this.outgoing;
    const written = this.written;
    this.outgoing = [];
    this.written = [];
    if (frames.length > 0) this.socket.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    for (const done of written) done();
  };

  /** The writer's answer to the CONNECT: 200 opens the tunnel, anything else ends it. */
  private readAnswer(chunk: Buffer): void {
    this.answered = true;
    const data = this.incoming.length === 0 ? chunk : Buffer.concat([this.incoming, chunk]);
    const end = data.indexOf('\r\n\r\n');
    if (end < 0) {
      if (data.length > ANSWER_HEAD_MAX) this.destroy();
      else this.incoming = Buffer.from(data);
      return;
    }
    this.incoming = EMPTY;
    if (!/^HTTP\/1\.1 200 /.test(data.toString('latin1', 0, Math.min(end, 64)))) {
      this.destroy();
      return;
    }
    this.up = true;
    this.flush();
    for (const stream of this.streams.values()) stream.emit('connect');
    if (data.length > end + 4) this.read(data.subarray(end + 4));
  }

  private read(chunk: Buffer): void {
    let data = this.incoming.length === 0 ? chunk : Buffer.concat([this.incoming, chunk]);
    let at = 0;
    while (data.length - at >= HEADER) {
      const type = data[at]!;
      const id = data.readUInt32BE(at + 1);
      const length = data.readUInt32BE(at + 5);
      if (type < FRAME.OPEN || type > FRAME.RESUME || length > MAX_PAYLOAD || (type !== FRAME.DATA && length > 0)) {
        // Not a frame of this protocol: the tunnel cannot be trusted any more.
        this.destroy();
        return;
      }
      if (data.length - at - HEADER < length) break;
      const payload = data.subarray(at + HEADER, at + HEADER + length);
      at += HEADER + length;
      this.dispatch(type, id, payload);
      if (this.ended) return;
    }
    data = data.subarray(at);
    // What is kept is a frame's beginning; copied, so that the chunk it came in is not held whole.
    this.incoming = data.length === 0 ? EMPTY : Buffer.from(data);
  }

  private dispatch(type: number, id: number, payload: Buffer): void {
    if (type === FRAME.OPEN) {
      if (this.options.onOpen === undefined || this.streams.has(id)) {
        this.destroy();
        return;
      }
      const stream = new TunnelSocket(this, id, true);
      this.streams.set(id, stream);
      this.options.onOpen(stream);
      return;
    }
    const stream = this.streams.get(id);
    // A frame of a stream this end closed already (the two crossed): nothing to do.
    if (stream === undefined) return;
    // The payload is a view of the tunnel's read; copied, so that a stream's kept bytes hold no more.
    if (type === FRAME.DATA) stream.received(Buffer.from(payload));
    else stream.peer(type);
  }

  private lost(): void {
    if (this.ended) return;
    this.ended = true;
    this.outgoing = [];
    this.written = [];
    for (const stream of this.streams.values()) {
      stream.gone = 'lost';
      stream.destroy();
    }
    this.streams.clear();
    this.held.clear();
    this.options.onEnd();
  }
}
