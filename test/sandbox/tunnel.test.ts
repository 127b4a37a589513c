/**
 * The tunnels of a shared sandbox (tunnel.ts, tunnel-ends.ts): many connections over one TCP
 * connection, their bytes, ends and flow control, and the two ends' handshake. The relay over a
 * tunnel when the writer goes is in test/shared/roles.test.ts; the processes on PostgreSQL relay
 * over tunnels in every test of test/shared.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Socket, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHelpers } from '../../src/sandbox/errors.js';
import { MAX_PAYLOAD, Tunnel, TunnelSocket } from '../../src/sandbox/tunnel.js';
import { TunnelAcceptor, TunnelDialer } from '../../src/sandbox/tunnel-ends.js';

const servers: (Server | HttpServer)[] = [];
const tunnels: Tunnel[] = [];
afterEach(async () => {
  for (const tunnel of tunnels.splice(0)) tunnel.destroy();
  for (const server of servers.splice(0)) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function port(server: Server | HttpServer): number {
  return (server.address() as AddressInfo).port;
}

async function listening<S extends Server | HttpServer>(server: S): Promise<S> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A writer's end taking any tunnel (its CONNECT answered 200), and what it accepted. */
async function writerEnd() {
  const accepted: TunnelSocket[] = [];
  const arrivals: ((stream: TunnelSocket) => void)[] = [];
  let connections = 0;
  const writerTunnels: Tunnel[] = [];
  const sockets: Socket[] = [];
  const server = await listening(
    createServer((socket) => {
      connections++;
      sockets.push(socket);
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        socket.write('HTTP/1.1 200 Tunnel Established\r\n\r\n');
        const tunnel = new Tunnel({
          socket,
          head: head.subarray(end + 4),
          onOpen: (stream) => {
            accepted.push(stream);
            arrivals.shift()?.(stream);
          },
          onEnd: () => undefined,
        });
        writerTunnels.push(tunnel);
        tunnels.push(tunnel);
      };
      socket.on('data', onData);
    }),
  );
  const next = () => new Promise<TunnelSocket>((resolve) => arrivals.push(resolve));
  return { server, accepted, next, writerTunnels, sockets, connections: () => connections };
}

function forwarderEnd(serverPort: number): Tunnel {
  const tunnel = new Tunnel({
    socket: connect({ host: '127.0.0.1', port: serverPort }),
    handshake: 'CONNECT writer.paylater.invalid:1 HTTP/1.1\r\nHost: writer.paylater.invalid:1\r\nPaylater-Writer: w\r\n\r\n',
    onEnd: () => undefined,
  });
  tunnels.push(tunnel);
  return tunnel;
}

/** A tunnel with two streams, each opened at the writer (a byte written on each). */
async function twoStreams() {
  const writer = await writerEnd();
  const tunnel = forwarderEnd(port(writer.server));
  const streams = [tunnel.open(), tunnel.open()] as const;
  for (const stream of streams) stream.write('-');
  while (writer.accepted.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  return { writer, tunnel, streams };
}

function readAll(stream: TunnelSocket | Socket): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => stream.once('end', () => resolve(Buffer.concat(chunks))));
}

/** A forwarding end written by hand: the CONNECT, answered, then an OPEN of stream `id`, as the writer accepted it. */
async function handWrittenForwarder(writer: Awaited<ReturnType<typeof writerEnd>>, id: number) {
  const raw = connect({ host: '127.0.0.1', port: port(writer.server) });
  raw.on('error', () => undefined);
  await once(raw, 'connect');
  raw.write('CONNECT writer.paylater.invalid:1 HTTP/1.1\r\nHost: writer.paylater.invalid:1\r\n\r\n');
  await once(raw, 'data');
  const opened = writer.next();
  raw.write(frame(1, id));
  return { raw, stream: await opened };
}

function frame(type: number, id: number, payload = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header[0] = type;
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(payload.length, 5);
  return Buffer.concat([header, payload]);
}

describe('a tunnel', () => {
  it('carries many connections over one TCP connection, each one\'s bytes in order both ways', async () => {
    const writer = await writerEnd();
    const tunnel = forwarderEnd(port(writer.server));
    const streams = Array.from({ length: 40 }, () => tunnel.open());
    await Promise.all(streams.map((stream) => once(stream, 'connect')));
    // The writer echoes each stream's bytes upper-cased, then ends it.
    const echoed = (async () => {
      while (writer.accepted.length < streams.length) await new Promise((resolve) => setTimeout(resolve, 5));
      for (const stream of writer.accepted) {
        void readAll(stream).then((bytes) => stream.end(bytes.toString('utf8').toUpperCase()));
      }
    })();
    const answers = streams.map((stream) => readAll(stream));
    streams.forEach((stream, index) => {
      stream.write(`stream ${index}, `);
      stream.end(`its last part ${index}`);
    });
    await echoed;
    const texts = (await Promise.all(answers)).map((bytes) => bytes.toString('utf8'));
    expect(texts).toEqual(streams.map((_, index) => `STREAM ${index}, ITS LAST PART ${index}`));
    expect(writer.connections()).toBe(1);
  });

  it('sends a write longer than a frame as several, and reads frames that arrive a byte at a time', async () => {
    const writer = await writerEnd();
    const tunnel = forwarderEnd(port(writer.server));
    const stream = tunnel.open();
    const big = Buffer.alloc(MAX_PAYLOAD * 3 + 17, 'x');
    big.write('start', 0);
    big.write('end', big.length - 3);
    const arrived = writer.next();
    stream.end(big);
    const received = await readAll(await arrived);
    expect(received.equals(big)).toBe(true);

    // A forwarding end written by hand, one byte a write.
    const raw = connect({ host: '127.0.0.1', port: port(writer.server) });
    raw.setNoDelay(true);
    await once(raw, 'connect');
    raw.write('CONNECT writer.paylater.invalid:1 HTTP/1.1\r\nHost: writer.paylater.invalid:1\r\n\r\n');
    await once(raw, 'data');
    const opened = writer.next();
    const bytes = Buffer.concat([frame(1, 7), frame(2, 7, Buffer.from('hello, ')), frame(2, 7, Buffer.from('one byte at a time')), frame(3, 7)]);
    for (const byte of bytes) {
      raw.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await readAll(await opened)).toString('utf8')).toBe('hello, one byte at a time');
    raw.destroy();
  });

  it('is ended by a frame not of its protocol, every stream going as lost', async () => {
    const writer = await writerEnd();
    const { raw, stream } = await handWrittenForwarder(writer, 3);
    const closed = once(stream, 'close');
    raw.write(frame(9, 3));
    await closed;
    expect(stream.gone).toBe('lost');
    expect(writer.writerTunnels[0]!.closed).toBe(true);
    await once(raw, 'close');
  });

  it("ends the forwarding side with the writer's, and keeps the writer's open for its answers when the client ends", async () => {
    const writer = await writerEnd();
    const tunnel = forwarderEnd(port(writer.server));
    const stream = tunnel.open();
    stream.write('request');
    const atWriter = await writer.next();
    const request = readAll(atWriter);
    stream.end();
    expect((await request).toString()).toBe('request');
    // The client's side ended; the writer's is still writable, and its answer arrives.
    expect(atWriter.writable).toBe(true);
    const answer = readAll(stream);
    const closed = once(stream, 'close');
    atWriter.end('answer after the end');
    expect((await answer).toString()).toBe('answer after the end');
    await closed;
    // Both sides ended, each by its END: neither was destroyed by the other.
    expect(stream.gone).toBeUndefined();
    expect(atWriter.gone).toBeUndefined();
  });

  it('tells a stream closed by the other end from one lost with the tunnel', async () => {
    const { writer, tunnel, streams } = await twoStreams();
    const [first, second] = streams;
    const firstClosed = once(first, 'close');
    writer.accepted[0]!.destroy();
    await firstClosed;
    expect(first.gone).toBe('closed');
    const secondClosed = once(second, 'close');
    writer.writerTunnels[0]!.destroy();
    await secondClosed;
    expect(second.gone).toBe('lost');
    expect(tunnel.closed).toBe(true);
  });

  it("holds a stream's writes while its reader does not read, and the other streams go on", async () => {
    const { writer, streams } = await twoStreams();
    const [slow, quick] = streams;
    const [slowAtWriter, quickAtWriter] = writer.accepted as [TunnelSocket, TunnelSocket];
    slowAtWriter.resume();
    quickAtWriter.resume();
    // The forwarding side of `slow` reads nothing: its buffer fills, and it asks the writer to pause.
    slow.pause();
    const piece = Buffer.alloc(64 * 1024, 's');
    // Written until a write stays held (no 'drain' within 300 ms): the forwarding side asked to pause.
    let written = 0;
    for (;;) {
      const more = slowAtWriter.write(piece);
      written += piece.length;
      if (written > 8 * 1024 * 1024) break;
      if (more) continue;
      const drained = await Promise.race([
        once(slowAtWriter, 'drain').then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
      ]);
      if (!drained) break;
    }
    expect(written).toBeLessThan(8 * 1024 * 1024);
    expect(slowAtWriter.writableNeedDrain).toBe(true);
    const drained = once(slowAtWriter, 'drain');
    let drainedYet = false;
    void drained.then(() => (drainedYet = true));
    // Meanwhile the other stream answers.
    const quickAnswer = new Promise<string>((resolve) => quick.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    quickAtWriter.write('quick answer');
    expect(await quickAnswer).toBe('quick answer');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(drainedYet).toBe(false);
    // Reading again lets the writer's writes through.
    let received = 0;
    slow.on('data', (chunk: Buffer) => (received += chunk.length));
    slow.resume();
    await drained;
    slowAtWriter.end();
    await once(slow, 'end');
    expect(received).toBe(written);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `piece` on `stream` until a write stays held (no 'drain' within `ms`); the bytes written. */
async function writeUntilHeld(stream: TunnelSocket, piece: Buffer, ms = 300): Promise<number> {
  let written = 0;
  for (;;) {
    const more = stream.write(piece);
    written += piece.length;
    if (written > 8 * 1024 * 1024) return written;
    if (more) continue;
    const drained = await Promise.race([once(stream, 'drain').then(() => true), sleep(ms).then(() => false)]);
    if (!drained) return written;
  }
}

describe('a tunnel under pressure', () => {
  it('completes a held write when the other end resumes while the tunnel is congested, after a drain that came during the pause', async () => {
    const { writer, tunnel, streams } = await twoStreams();
    const [held, filler] = streams;
    const [heldAtWriter, fillerAtWriter] = writer.accepted as [TunnelSocket, TunnelSocket];
    fillerAtWriter.resume();
    // The writer's reader of `held` stops reading: the stream asks the forwarding side to pause.
    heldAtWriter.pause();
    const written = await writeUntilHeld(held, Buffer.alloc(16 * 1024, 'h'));
    expect(written).toBeLessThan(8 * 1024 * 1024);
    expect(held.writableNeedDrain).toBe(true);
    let drained = false;
    held.once('drain', () => (drained = true));
    const congest = async () => {
      writer.sockets[0]!.pause();
      for (let index = 0; index < 200; index++) filler.write(Buffer.alloc(64 * 1024, 'f'));
      await sleep(200);
      expect(tunnel.congested).toBe(true);
    };
    // The tunnel congests and drains while `held` is paused, then congests again.
    await congest();
    writer.sockets[0]!.resume();
    await sleep(500);
    await congest();
    // RESUME arrives while the tunnel is congested; then the tunnel drains.
    heldAtWriter.resume();
    await sleep(200);
    expect(drained).toBe(false);
    writer.sockets[0]!.resume();
    const deadline = Date.now() + 5_000;
    while (!drained && Date.now() < deadline) await sleep(20);
    expect(drained).toBe(true);
    expect(held.writableLength).toBe(0);
  });

  it("reads what arrived before the other end closed the stream, then ends; a write after it fails", async () => {
    const { writer, streams } = await twoStreams();
    const [stream] = streams;
    const atWriter = writer.accepted[0]!;
    stream.pause();
    const answer = Buffer.alloc(10_000, 'a');
    atWriter.write(answer);
    await sleep(100);
    atWriter.destroy();
    await sleep(100);
    // The CLOSE is in; what came before it is still read.
    const received = readAll(stream);
    const closed = once(stream, 'close');
    stream.resume();
    expect((await received).equals(answer)).toBe(true);
    await closed;
    expect(stream.gone).toBe('closed');
    const failed = new Promise<Error | null | undefined>((resolve) => stream.write('late', resolve));
    expect(await failed).toBeInstanceOf(Error);
  });

  it('is ended by a forwarding end that goes on sending a stream past its PAUSE', async () => {
    const writer = await writerEnd();
    const { raw, stream } = await handWrittenForwarder(writer, 5);
    stream.pause();
    const closed = once(stream, 'close');
    const piece = frame(2, 5, Buffer.alloc(MAX_PAYLOAD, 'x'));
    // 20 MiB, PAUSE or not (the stream holds at most 16 MiB unread past it).
    for (let index = 0; index < 320 && !raw.destroyed; index++) {
      if (!raw.write(piece)) await new Promise((resolve) => (raw.once('drain', resolve), raw.once('close', resolve)));
    }
    await closed;
    expect(stream.gone).toBe('lost');
    expect(writer.writerTunnels[0]!.closed).toBe(true);
  });
});

describe("a tunnel's two ends", () => {
  async function httpWriter(options: { id?: string; maxConnections?: number } = {}) {
    const server = createHttpServer((request, response) => {
      response.setHeader('Content-Type', 'application/json');
      response.end(JSON.stringify({ url: request.url }));
    });
    const acceptor = new TunnelAcceptor(server, (id) => id === (options.id ?? 'w1'), options.maxConnections ?? 100, errorHelpers('apiError'));
    await listening(server);
    return { server, acceptor, target: { host: '127.0.0.1', port: port(server), id: options.id ?? 'w1' } };
  }

  async function exchange(socket: Socket | TunnelSocket, raw: string): Promise<string> {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(raw);
    await once(socket, 'close');
    return Buffer.concat(chunks).toString('utf8');
  }

  it("serves each stream as a connection of the writer's HTTP server", async () => {
    const writer = await httpWriter();
    const dialer = new TunnelDialer();
    try {
      const answers = await Promise.all(
        ['/a', '/b', '/c'].map((path) => exchange(dialer.open(writer.target), `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)),
      );
      answers.forEach((answer, index) => {
        expect(answer).toMatch(/^HTTP\/1\.1 200 /);
        expect(answer).toContain(`{"url":"/${'abc'[index]}"}`);
      });
      expect(await new Promise((resolve) => writer.server.getConnections((_, count) => resolve(count)))).toBe(1);
    } finally {
      dialer.close();
    }
  });

  it('answers a CONNECT without the writer header 405, and one for another writer 503 with Retry-After, in the error format', async () => {
    const writer = await httpWriter();
    const ask = async (headers: string) => {
      const socket = connect({ host: '127.0.0.1', port: port(writer.server) });
      return exchange(socket, `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n${headers}\r\n`);
    };
    const plain = await ask('');
    expect(plain).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    const allowed = /\r\nAllow: ([^\r]*)\r\n/.exec(plain)?.[1]?.split(', ');
    expect(allowed?.sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT']);
    expect(JSON.parse(plain.split('\r\n\r\n')[1]!)).toMatchObject({ errorCode: 'METHOD_NOT_ALLOWED', requestId: expect.stringMatching(/^req_/) });
    const other = await ask('Paylater-Writer: w2\r\n');
    expect(other).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(other).toMatch(/\r\nRetry-After: 2\r\n/);
    const body = JSON.parse(other.split('\r\n\r\n')[1]!) as { errorCode: string; message: string };
    expect(body.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(body.message).toMatch(/not the shared sandbox's writer now\. Send the request again in 2 s/);
  });

  it("closes a stream over the writer's connection limit at once, as a dropped connection", async () => {
    const writer = await httpWriter({ maxConnections: 2 });
    let drops = 0;
    writer.server.on('drop', () => drops++);
    const dialer = new TunnelDialer();
    try {
      const held = [dialer.open(writer.target), dialer.open(writer.target)];
      for (const stream of held) stream.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
      await Promise.all(held.map((stream) => once(stream, 'data')));
      const third = dialer.open(writer.target);
      await once(third, 'close');
      expect(third instanceof TunnelSocket && third.gone).toBe('closed');
      expect(drops).toBe(1);
      for (const stream of held) stream.destroy();
    } finally {
      dialer.close();
    }
  });

  it('relays the connections of a writer that answers a CONNECT with nothing one TCP connection each', async () => {
    // A server with no CONNECT listener: Node closes such a connection without an answer.
    const server = await listening(
      createHttpServer((request, response) => {
        response.end(`served ${request.url}`);
      }),
    );
    const dialer = new TunnelDialer();
    const target = { host: '127.0.0.1', port: port(server), id: 'w1' };
    try {
      const first = dialer.open(target);
      expect(first).toBeInstanceOf(TunnelSocket);
      await once(first, 'close');
      expect((first as TunnelSocket).gone).toBe('lost');
      const next = dialer.open(target);
      expect(next).not.toBeInstanceOf(TunnelSocket);
      expect(await exchange(next, 'GET /direct HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/served \/direct$/);
    } finally {
      dialer.close();
    }
  });
});
