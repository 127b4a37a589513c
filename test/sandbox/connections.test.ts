/**
 * The sandbox's bounds on client connections: at most `maxConnections` open (one more is closed at
 * once, with a warning naming the limit), and the 408s of requests that expired together written a
 * few per turn of the event loop, every one of them still written.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TIMEOUT_ANSWERS_PER_TURN, TurnBatches } from '../../src/sandbox/connections.js';
import type { Logger } from '../../src/sandbox/router.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { waitFor } from '../support/sandbox.js';

const warnings: string[] = [];
const logger: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: () => undefined };
let sandbox: Sandbox | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await sandbox?.close();
  sandbox = undefined;
  warnings.length = 0;
});

/** A connection to the sandbox and what it receives until it closes. */
function open(url: string): { socket: Socket; received: () => string; closed: Promise<void>; connected: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  return { socket, received: () => data, closed, connected };
}

describe('the connection limit', () => {
  it('closes a connection beyond maxConnections at once and warns, naming the limit and the setting', async () => {
    sandbox = await createSandbox({ logger, config: { maxConnections: 3 } });
    const url = await sandbox.listen(0, '127.0.0.1');
    const held = [open(url), open(url), open(url)];
    await Promise.all(held.map((connection) => connection.connected));
    await waitFor(() => new Promise<true | undefined>((resolve) => sandbox!.server.getConnections((_error, count) => resolve(count === 3 ? true : undefined))));
    const fourth = open(url);
    await fourth.closed;
    expect(fourth.received()).toBe('');
    expect(warnings).toEqual([
      '3 connections are open, the limit: 1 new connection was closed at once. Raise the limit with --max-connections N or PAYLATER_MAX_CONNECTIONS.',
    ]);
    // Once one is closed, a new connection is served.
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await waitFor(() => new Promise<true | undefined>((resolve) => sandbox!.server.getConnections((_error, count) => resolve(count === 2 ? true : undefined))));
    const answer = await fetch(`${url}/sandbox/clock`, { headers: { Connection: 'close' } });
    expect(answer.status).toBe(200);
  });

  it('is 1000 by default, PAYLATER_MAX_CONNECTIONS or an option', async () => {
    sandbox = await createSandbox({ logger });
    expect(sandbox.server.maxConnections).toBe(1000);
    await sandbox.close();
    sandbox = await createSandbox({ logger, env: { PAYLATER_MAX_CONNECTIONS: '50' } });
    expect(sandbox.server.maxConnections).toBe(50);
  });
});

describe('requests that expire together', () => {
  it('are all answered 408', async () => {
    sandbox = await createSandbox({ logger, timeouts: { headersMs: 200, requestMs: 400, checkIntervalMs: 100 } });
    const url = await sandbox.listen(0, '127.0.0.1');
    const slow = Array.from({ length: 150 }, () => open(url));
    await Promise.all(slow.map((connection) => connection.connected));
    for (const connection of slow) connection.socket.write('GET /sandbox/clock HTTP/1.1\r\nHost: x\r\n');
    await Promise.all(slow.map((connection) => connection.closed));
    for (const connection of slow) expect(connection.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('are answered at most TIMEOUT_ANSWERS_PER_TURN per turn of the event loop, in order', async () => {
    const batches = new TurnBatches();
    const ran: number[] = [];
    for (let index = 0; index < 150; index++) batches.add(() => ran.push(index));
    expect(ran).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toHaveLength(TIMEOUT_ANSWERS_PER_TURN);
    await waitFor(() => (ran.length === 150 ? true : undefined));
    expect(ran).toEqual(Array.from({ length: 150 }, (_, index) => index));
    // A task that throws does not stop the others.
    const after: string[] = [];
    batches.add(() => {
      throw new Error('gone');
    });
    batches.add(() => after.push('next'));
    await waitFor(() => (after.length === 1 ? true : undefined));
  });
});
