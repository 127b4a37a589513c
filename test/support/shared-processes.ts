/**
 * `paylater sandbox --database-url` processes for the shared store's process tests
 * (test/shared/processes.test.ts, test/shared/outage.test.ts): start one as `npm start` runs it,
 * talk to it signed, and a webhook receiver that keeps what it got (and checks each signature).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SANDBOX_HEAP_FLAGS } from '../../src/cli/heap.js';
import { sdkSignature, verifySdkSignature } from '../../src/signature.js';
import { CLI_ENTRY } from './cli.js';
import { startOnFreePort, type StartedChild } from './processes.js';
import { PARTNER_ID, PRIVATE_KEY } from './sandbox.js';

export interface Receiver {
  url: string;
  /** Event ids received, in order, repeats included. */
  events: string[];
  bodies: Map<string, string>;
  /** Event ids received without a valid signature (repeats included). */
  unsigned: string[];
  /** How long the receiver takes to answer. */
  delayMs: number;
  server: Server;
}

/** A receiver answering 200 after `delayMs`, checking every webhook's X-Signature against the test key. */
export async function startReceiver(): Promise<Receiver> {
  const receiver = { url: '', events: [] as string[], bodies: new Map<string, string>(), unsigned: [] as string[], delayMs: 0 } as Receiver;
  receiver.server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const eventId = String(request.headers['x-event-id']);
      if (!verifySdkSignature(request.headers['x-signature'], body, PRIVATE_KEY)) receiver.unsigned.push(eventId);
      setTimeout(() => {
        receiver.events.push(eventId);
        receiver.bodies.set(eventId, body);
        response.writeHead(200).end();
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts a sandbox process on `databaseUrl` with the heap flags, as `npm start` runs it: one
 * process (not one that starts the sandbox as its child), so that SIGKILL kills the sandbox itself.
 */
export function startSharedProcess(databaseUrl: string, args: string[] = []): Promise<StartedChild> {
  return startOnFreePort(
    (port) =>
      spawn(
        process.execPath,
        [...SANDBOX_HEAP_FLAGS.map(({ flag }) => flag), CLI_ENTRY, 'sandbox', '--port', String(port), '--quiet', '--database-url', databaseUrl, ...args],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
      ),
    { ready: /listening on http/ },
  );
}

const origin = (started: StartedChild): string => `http://127.0.0.1:${started.port}`;

/** A signed SDK request; the answer's status, Retry-After and body. */
export async function sdkCall(started: StartedChild, path: string, body: unknown) {
  const text = JSON.stringify(body);
  const response = await fetch(`${origin(started)}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Partnerid': PARTNER_ID, 'X-Signature': sdkSignature(text, PRIVATE_KEY) },
    body: text,
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as { message: string; detail?: string },
  };
}

export const initiateOn = (started: StartedChild, id: string, amount = 10_000) =>
  sdkCall(started, '/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919876543210', userId: 'u', amount });

export const statusOn = async (started: StartedChild, id: string): Promise<string> =>
  (await sdkCall(started, '/merchant/credit/checkTransactionStatus', { merchantTransactionId: id })).body.message;

/** An unsigned POST (the sandbox-only endpoints). */
export const postTo = (started: StartedChild, path: string, body?: unknown): Promise<Response> =>
  fetch(`${origin(started)}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
