/**
 * Webhook delivery under load: 1,000 events to one slow receiver never open more connections than
 * the per-receiver limit and all arrive; a failure of the sandbox's own machine (EMFILE) does not
 * use up an attempt, and is counted only after the bounded local retries; a receiver's backlog is
 * bounded; a host name that resolves to a refused address is not contacted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryDispatcher, MAX_LOCAL_RETRIES, type EnqueueInput } from '../../src/sandbox/delivery/index.js';
import { WebhookTargets } from '../../src/sandbox/webhook-targets.js';
import { startSandbox, waitFor, type TestSandbox } from '../support/sandbox.js';

let t: TestSandbox | undefined;
let receiver: Server | undefined;
const clocks: VirtualClock[] = [];
const dispatchers: DeliveryDispatcher[] = [];

afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
  for (const clock of clocks.splice(0)) clock.stop();
  if (receiver !== undefined) {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver!.close(() => resolve()));
    receiver = undefined;
  }
});

const event = (index: number, url: string | null): EnqueueInput => ({
  url,
  body: JSON.stringify({ index }),
  headers: {},
  orderingKey: `load_${index}`,
  successStatus: '2xx',
  family: 'sdk',
  event: 'transactionStatus',
  transactionId: `load_${index}`,
});

function dispatcher(fetchImpl: typeof fetch, extra: Partial<ConstructorParameters<typeof DeliveryDispatcher>[0]> = {}) {
  const clock = new VirtualClock();
  clocks.push(clock);
  const created = new DeliveryDispatcher({
    clock,
    fetch: fetchImpl,
    localRetryDelayMs: { base: 1, max: 4 },
    ...extra,
  });
  dispatchers.push(created);
  return { dispatcher: created, clock };
}

/** A fetch failure as Node's fetch reports one: TypeError('fetch failed') caused by a system error. */
function systemError(code: string): TypeError {
  const cause = Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code, syscall: 'connect' });
  return new TypeError('fetch failed', { cause });
}

describe('one slow receiver and 1,000 events', () => {
  it('never has more than 8 connections open at once, and receives every event', async () => {
    let open = 0;
    let maxOpen = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const received = new Set<number>();
    receiver = createServer((request, response) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.add((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { index: number }).index);
        setTimeout(() => {
          inFlight--;
          response.writeHead(200).end('ok');
        }, 5);
      });
    });
    receiver.on('connection', (socket) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      socket.on('close', () => open--);
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    t = await startSandbox({ config: { partner: { webhookUrl: url } } });
    const { sandbox } = t;
    await sandbox.store.unit(() => {
      for (let index = 0; index < 1000; index++) sandbox.deliveries.enqueue(event(index, url));
    });
    await waitFor(() => (received.size === 1000 ? true : undefined), 60_000);
    await t.sandbox.deliveries.idle();

    expect(maxOpen).toBeLessThanOrEqual(8);
    expect(maxInFlight).toBeLessThanOrEqual(8);
    expect(maxInFlight).toBeGreaterThan(1);
    // Every page of delivered ones (a page stops at its byte budget, with a cursor).
    const delivered = [];
    let after: string | undefined;
    do {
      const page = t.sandbox.deliveries.page({ status: 'delivered', limit: 1000, after });
      delivered.push(...page.deliveries);
      after = page.nextCursor ?? undefined;
    } while (after !== undefined);
    expect(delivered).toHaveLength(1000);
    expect(delivered.every((delivery) => delivery.attempts.length === 1)).toBe(true);
  });

  it('takes the limit from the configuration', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let count = 0;
    const slow: typeof fetch = async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight--;
      count++;
      return new Response(null, { status: 200 });
    };
    const { dispatcher: d } = dispatcher(slow, { config: { webhooks: { concurrency: 3 } } });
    for (let index = 0; index < 60; index++) d.enqueue(event(index, 'http://127.0.0.1:9/hook'));
    await d.idle();
    expect(count).toBe(60);
    expect(maxInFlight).toBe(3);
  });
});

describe('errors of the sandbox\'s own machine', () => {
  it('an EMFILE before anything was sent is retried without using up an attempt', async () => {
    let calls = 0;
    const flaky: typeof fetch = async () => {
      calls++;
      if (calls <= 3) throw systemError('EMFILE');
      return new Response(null, { status: 200 });
    };
    const { dispatcher: d } = dispatcher(flaky);
    const { id } = d.enqueue(event(1, 'http://127.0.0.1:9/hook'));
    const delivered = await waitFor(() => (d.get(id)?.status === 'delivered' ? d.get(id) : undefined));
    expect(calls).toBe(4);
    expect(delivered.attempts).toHaveLength(1);
    expect(delivered.attempts[0]).toMatchObject({ attempt: 1, statusCode: 200 });
  });

  it('counts one attempt after the bounded local retries, so it never loops forever', async () => {
    let calls = 0;
    const broken: typeof fetch = async () => {
      calls++;
      throw systemError('ENFILE');
    };
    const { dispatcher: d } = dispatcher(broken);
    const { id } = d.enqueue(event(2, 'http://127.0.0.1:9/hook'));
    const counted = await waitFor(() => (d.get(id)!.attempts.length === 1 ? d.get(id) : undefined));
    expect(calls).toBe(MAX_LOCAL_RETRIES + 1);
    expect(counted.status).toBe('pending');
    expect(counted.attempts[0]!.error).toMatch(/ENFILE/);
    expect(counted.attempts[0]!.error).toMatch(/counted after 8 retries/);
    expect(counted.nextAttemptAt).not.toBeNull();
  });

  it('a refused connection is the receiver\'s failure and counts at once', async () => {
    let calls = 0;
    const refused: typeof fetch = async () => {
      calls++;
      throw systemError('ECONNREFUSED');
    };
    const { dispatcher: d } = dispatcher(refused);
    const { id } = d.enqueue(event(3, 'http://127.0.0.1:9/hook'));
    const counted = await waitFor(() => (d.get(id)!.attempts.length === 1 ? d.get(id) : undefined));
    expect(calls).toBe(1);
    expect(counted.attempts[0]!.error).toMatch(/^ECONNREFUSED/);
  });
});

describe('bounds and refusals', () => {
  it('a receiver has a bounded backlog: later events are recorded not_sent with the reason', async () => {
    const never: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const { dispatcher: d } = dispatcher(never, { maxPendingPerReceiver: 20 });
    const records = Array.from({ length: 25 }, (_, index) => d.enqueue(event(index, 'http://127.0.0.1:9/hook')));
    expect(records.slice(0, 20).every((record) => record.status === 'pending')).toBe(true);
    for (const record of records.slice(20)) {
      expect(record.status).toBe('not_sent');
      expect(record.reason).toMatch(/20 undelivered events waiting/);
    }
    // Another receiver is not affected.
    expect(d.enqueue(event(99, 'http://127.0.0.1:10/hook')).status).toBe('pending');
  });

  it('a host name that resolves to a refused address is abandoned without being contacted', async () => {
    let calls = 0;
    const counting: typeof fetch = async () => {
      calls++;
      return new Response(null, { status: 200 });
    };
    const targets = new WebhookTargets({
      allowAny: false,
      lookup: async (host) => (host === 'metadata-alias.test' ? ['169.254.169.254'] : ['127.0.0.1']),
    });
    const { dispatcher: d } = dispatcher(counting, { targets });
    const refused = d.enqueue(event(1, 'http://metadata-alias.test/latest/meta-data'));
    const allowed = d.enqueue(event(2, 'http://receiver.test:9000/hook'));
    await d.idle();
    const record = d.get(refused.id)!;
    expect(record.status).toBe('abandoned');
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]!.error).toMatch(/refused by the sandbox: the webhook URL points at a cloud metadata endpoint/);
    expect(d.get(allowed.id)!.status).toBe('delivered');
    expect(calls).toBe(1);
  });

  it('keeps the newest completed deliveries up to the retention limit, and every pending one', async () => {
    const never: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const { dispatcher: d } = dispatcher(never, { config: { retention: { deliveries: 10 } } });
    const pending = Array.from({ length: 5 }, (_, index) => d.enqueue(event(index, 'http://127.0.0.1:9/hook')));
    const done = Array.from({ length: 30 }, (_, index) => d.enqueue(event(100 + index, null)));
    expect(d.size).toBe(15);
    for (const record of pending) expect(d.get(record.id)?.status).toBe('pending');
    // Ids are read back exactly: another dispatcher's, a changed or a malformed one finds nothing.
    const id = pending[0]!.id;
    for (const other of [id.toUpperCase(), `${id}0`, id.slice(0, -1), `dlv_${'0'.repeat(32)}`, '', 'dlv_']) expect(d.get(other)).toBeUndefined();
    expect(done.slice(0, 20).every((record) => d.get(record.id) === undefined)).toBe(true);
    expect(d.list().map((record) => record.id)).toEqual([...pending, ...done.slice(20)].map((record) => record.id));
    expect(d.page({ transactionId: 'load_100' }).deliveries).toEqual([]);
    expect(d.page({ transactionId: 'load_129' }).deliveries).toHaveLength(1);
  });
});
