/**
 * Finding 8: the transport.
 * - host-headers: a request with two `Host` headers, written as raw bytes: answered 400.
 * - slow-connections: 5,000 connections opened in batches, each sending part of a request line and
 *   headers and then nothing, held until the sandbox closes them (its header time-out): the sandbox
 *   stays responsive, refuses or holds them in bounded memory, and closes every one in the end.
 * - slow-streams: 16 readers of `GET /sandbox/webhooks/stream` that read a little every 0.5 s while
 *   100,000 webhook events are recorded (the finding's 1,000,000, scaled to the time of the bench).
 */
import { connect, type Socket } from 'node:net';
import { merchant, rawDeclinedTransaction, runId } from './flows.js';
import { sleep, waitUntil } from './http.js';
import { pipelined } from './pipeline.js';
import type { Attack } from './context.js';
import type { Check } from './verdict.js';

const SLOW_CONNECTIONS = 5_000;
const BATCH = 250;
/** How long the slow connections may take to be closed by the sandbox after the last one opened. */
const CLOSE_WAIT_MS = 45_000;
const READERS = 16;
const STREAM_EVENTS = 100_000;

/** Writes `bytes` on a new connection; resolves to what came back (up to 4 KiB) when it closes or after `timeoutMs`. */
function rawExchange(url: string, bytes: string, timeoutMs = 5_000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.length > 4096 || /\r\n\r\n/.test(text)) done();
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}

/** The status of the first line of an HTTP answer, 0 when there is none. */
export function statusOf(answer: string): number {
  return Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(answer)?.[1] ?? 0);
}

export const hostHeadersAttack: Attack = {
  finding: '8a',
  name: 'host-headers',
  title: 'a request with two Host headers',
  deadlineSeconds: 30,
  async run(ctx) {
    const sandbox = await ctx.sandbox();
    const answer = await rawExchange(
      sandbox.url,
      'GET /sandbox/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n',
    );
    const status = statusOf(answer);
    return { checks: [{ ok: status === 400, reason: status === 0 ? 'no answer' : `answered ${status}, not 400` }], note: 'answered 400' };
  },
};

export const slowConnectionsAttack: Attack = {
  finding: '8b',
  name: 'slow-connections',
  title: `${SLOW_CONNECTIONS} connections that send part of a request and wait`,
  deadlineSeconds: 120,
  async run(ctx) {
    const sandbox = await ctx.sandbox();
    await ctx.probe(sandbox);
    const { hostname, port } = new URL(sandbox.url);
    const sockets = new Set<Socket>();
    ctx.defer(() => {
      for (const socket of sockets) socket.destroy();
    });
    let connected = 0;
    let refused = 0;
    let closedBySandbox = 0;
    let answered = 0;
    const started = performance.now();
    let lastOpened = started;
    for (let opened = 0; opened < SLOW_CONNECTIONS && !ctx.signal.aborted; opened += BATCH) {
      await Promise.all(
        Array.from({ length: Math.min(BATCH, SLOW_CONNECTIONS - opened) }, () =>
          new Promise<void>((settled) => {
            const socket = connect(Number(port), hostname);
            sockets.add(socket);
            let wasConnected = false;
            const timer = setTimeout(settled, 5_000);
            socket.on('connect', () => {
              wasConnected = true;
              connected++;
              socket.write(`GET /sandbox/clock HTTP/1.1\r\nHost: ${hostname}\r\nX-Slow: `);
              clearTimeout(timer);
              settled();
            });
            socket.on('data', () => {
              answered++;
            });
            socket.on('error', () => undefined);
            socket.on('close', () => {
              sockets.delete(socket);
              if (wasConnected) closedBySandbox++;
              else refused++;
              clearTimeout(timer);
              settled();
            });
          }),
        ),
      );
      lastOpened = performance.now();
    }
    const openAfterBatches = sockets.size;
    const allClosed = await waitUntil(() => sockets.size === 0 || !sandbox.alive(), CLOSE_WAIT_MS, 250);
    const closedAfter = (performance.now() - lastOpened) / 1000;
    const checks: Check[] = [
      {
        ok: allClosed && sockets.size === 0,
        reason: `${sockets.size} of ${connected} connections still open ${Math.round(CLOSE_WAIT_MS / 1000)} s after the last was opened`,
      },
    ];
    return {
      checks,
      note: `${connected} accepted (${openAfterBatches} open at once), ${refused} refused; closed by the sandbox within ${closedAfter.toFixed(0)} s (${answered} with an answer)`,
    };
  },
};

export const slowStreamsAttack: Attack = {
  finding: '8c',
  name: 'slow-streams',
  title: `${STREAM_EVENTS} webhook events while ${READERS} slow readers hold the webhook stream`,
  deadlineSeconds: 120,
  async run(ctx) {
    const sandbox = await ctx.sandbox();
    await ctx.probe(sandbox);
    const { hostname, port } = new URL(sandbox.url);
    const readers: Socket[] = [];
    let received = 0;
    let closed = 0;
    for (let index = 0; index < READERS; index++) {
      const socket = connect(Number(port), hostname);
      socket.write(`GET /sandbox/webhooks/stream HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`);
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        socket.pause();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => closed++);
      readers.push(socket);
    }
    // Slow: one chunk every 0.5 s per reader.
    const reading = setInterval(() => {
      for (const socket of readers) socket.resume();
    }, 500);
    ctx.defer(() => {
      clearInterval(reading);
      for (const socket of readers) socket.destroy();
    });
    await sleep(200);
    const run = runId('r');
    const auth = await merchant(sandbox.url, undefined, run);
    let failures = 0;
    const started = performance.now();
    const driven = await pipelined(sandbox.url, STREAM_EVENTS, (index) => rawDeclinedTransaction(auth, `${run}_${index}`), {
      onStatus: (_index, status) => {
        if (status !== 200) failures++;
      },
      stop: () => ctx.signal.aborted || !sandbox.alive() || performance.now() - started > 90_000,
    });
    const seconds = (performance.now() - started) / 1000;
    return {
      checks: [
        { ok: failures === 0, reason: `${failures} of ${driven} transactions not created` },
        { ok: driven === STREAM_EVENTS, reason: `only ${driven} of ${STREAM_EVENTS} events within the time` },
      ],
      note: `${driven} events in ${seconds.toFixed(0)} s; the readers got ${(received / 1024 / 1024).toFixed(1)} MB, ${closed} of ${READERS} were disconnected`,
    };
  },
};
