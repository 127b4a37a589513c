/**
 * GET /sandbox/webhooks/deliveries a page at a time: limit, opaque cursor, filters, clear 400s;
 * and 25 clients that never read their answers neither stall the sandbox nor fill its memory; the
 * index by transaction, built when a filtered page is asked for.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryDispatcher } from '../../src/sandbox/delivery/index.js';

let t: TestSandbox;
const created: { id: string; family: string; transactionId: string }[] = [];

beforeAll(async () => {
  t = await startSandbox();
  // 250 events without a URL: recorded at once as not_sent, in this order (in a unit of work, as
  // every change of state).
  await t.sandbox.store.unit(() => {
    for (let index = 0; index < 250; index++) {
      const family = (['sdk', 'web', 'gateway'] as const)[index % 3]!;
      const transactionId = `list_${index % 10}`;
      const delivery = t.sandbox.deliveries.enqueue({
        url: null,
        body: JSON.stringify({ index }),
        headers: {},
        orderingKey: `k_${index}`,
        successStatus: '2xx',
        family,
        event: 'transactionStatus',
        transactionId,
      });
      created.push({ id: delivery.id, family, transactionId });
    }
  });
});
afterAll(async () => {
  await t.close();
});

async function page(query: string) {
  const answer = await t.request('GET', `/sandbox/webhooks/deliveries${query}`);
  return answer;
}

describe('GET /sandbox/webhooks/deliveries', () => {
  it('answers 100 by default, in creation order, with a nextCursor that leads through every page', async () => {
    const seen: string[] = [];
    let answer = await page('');
    expect(answer.status).toBe(200);
    expect(answer.body.deliveries).toHaveLength(100);
    let pages = 1;
    for (;;) {
      seen.push(...answer.body.deliveries.map((delivery: { id: string }) => delivery.id));
      if (answer.body.nextCursor === null) break;
      expect(typeof answer.body.nextCursor).toBe('string');
      answer = await page(`?after=${encodeURIComponent(answer.body.nextCursor)}`);
      expect(answer.status).toBe(200);
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(created.map((delivery) => delivery.id));
  });

  it('filters by transaction id, family and status, and pages within the filter', async () => {
    const wanted = created.filter((delivery) => delivery.transactionId === 'list_3' && delivery.family === 'gateway').map((delivery) => delivery.id);
    const first = await page('?transactionId=list_3&family=gateway&status=not_sent&limit=3');
    expect(first.status).toBe(200);
    expect(first.body.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual(wanted.slice(0, 3));
    const second = await page(`?transactionId=list_3&family=gateway&status=not_sent&limit=1000&after=${first.body.nextCursor}`);
    expect(second.body.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual(wanted.slice(3));
    expect(second.body.nextCursor).toBeNull();
    const none = await page('?status=delivered');
    expect(none.body).toEqual({ deliveries: [], nextCursor: null });
  });

  it('answers newest first with order=newest, page by page to the oldest, filters applied; a cursor of one order is refused by the other', async () => {
    const seen: string[] = [];
    let answer = await page('?order=newest&limit=40');
    expect(answer.status).toBe(200);
    const firstCursor = answer.body.nextCursor as string;
    for (;;) {
      expect(answer.body.deliveries.length).toBeLessThanOrEqual(40);
      seen.push(...answer.body.deliveries.map((delivery: { id: string }) => delivery.id));
      if (answer.body.nextCursor === null) break;
      answer = await page(`?order=newest&limit=40&after=${encodeURIComponent(answer.body.nextCursor)}`);
      expect(answer.status).toBe(200);
    }
    expect(seen).toEqual(created.map((delivery) => delivery.id).reverse());

    const wanted = created.filter((delivery) => delivery.transactionId === 'list_4' && delivery.family === 'web').map((delivery) => delivery.id);
    const filtered = await page('?order=newest&transactionId=list_4&family=web&limit=2');
    expect(filtered.body.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual(wanted.slice(-2).reverse());

    expect((await page(`?after=${encodeURIComponent(firstCursor)}&limit=40`)).status).toBe(400);
    const bad = await page('?order=latest');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('order must be oldest');
  });

  it('answers 400 for a limit outside 1 to 1000 and accepts 1000', async () => {
    for (const limit of ['0', '1001', 'abc', '-5', '1.5', '']) {
      const answer = await page(`?limit=${limit}`);
      expect(answer.status, `limit=${limit}`).toBe(400);
      expect(answer.body.errorCode).toBe('BAD_REQUEST');
      expect(answer.body.message).toMatch(/limit must be a whole number from 1 to 1000/);
      expect(answer.body.details).toEqual([{ field: 'limit', issue: expect.any(String) }]);
    }
    const all = await page('?limit=1000');
    expect(all.status).toBe(200);
    expect(all.body.deliveries).toHaveLength(250);
    expect(all.body.nextCursor).toBeNull();
  });

  it('answers 400 for a cursor it did not issue, a tampered one, or one of other filters', async () => {
    const first = await page('?limit=10');
    const cursor = first.body.nextCursor as string;
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    const tampered = Buffer.from(decoded.replace(/^[0-9]+/, '3'), 'utf8').toString('base64url');
    for (const after of ['abc', 'MTAw', tampered, `${cursor}x`]) {
      const answer = await page(`?after=${encodeURIComponent(after)}`);
      expect(answer.status, after).toBe(400);
      expect(answer.body.message).toMatch(/not a cursor this sandbox issued/);
      expect(answer.body.details).toEqual([{ field: 'after', issue: expect.any(String) }]);
    }
    const otherFilters = await page(`?family=sdk&after=${cursor}`);
    expect(otherFilters.status).toBe(400);
    expect((await page(`?after=${cursor}`)).status).toBe(200);
  });

  it('answers 400 for an unknown status or a repeated parameter', async () => {
    const status = await page('?status=lost');
    expect(status.status).toBe(400);
    expect(status.body.message).toMatch(/status must be one of pending, delivered, abandoned, not_sent/);
    const repeated = await page('?limit=5&limit=6');
    expect(repeated.status).toBe(400);
  });
});

describe('25 clients that never read their answers', () => {
  it('leave the sandbox answering within 100 ms and its memory bounded', async () => {
    const big = await startSandbox();
    const sockets: Socket[] = [];
    try {
      // 20,000 deliveries of about 1 KB each: the whole log is over 25 MB as JSON.
      const padding = 'x'.repeat(1000);
      await big.sandbox.store.unit(() => {
        for (let index = 0; index < 20_000; index++) {
          big.sandbox.deliveries.enqueue({
            url: null,
            body: JSON.stringify({ index, padding }),
            headers: {},
            orderingKey: `k_${index}`,
            successStatus: '2xx',
            family: 'sdk',
            event: 'transactionStatus',
            transactionId: `slow_${index}`,
          });
        }
      });
      // On the shared store (npm run test:shared) the deliveries are written to the database by a
      // unit of work of their own: done before the measurement, which is of the slow readers.
      await big.sandbox.store.unit(() => undefined);
      const { port, hostname } = new URL(big.url);
      const memoryBefore = process.memoryUsage();
      for (let index = 0; index < 25; index++) {
        const socket = connect(Number(port), hostname);
        socket.on('error', () => undefined);
        // Never read: the answer piles up on the sandbox's side until the socket buffers are full.
        socket.pause();
        socket.write(`GET /sandbox/webhooks/deliveries?limit=1000 HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
        sockets.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));

      // The fastest of five requests: a sandbox stalled by the slow readers makes every one slow,
      // while a busy test machine delays only some of them.
      const times: number[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const started = performance.now();
        const answer = await fetch(`${big.url}/sandbox/clock`);
        await answer.json();
        times.push(performance.now() - started);
        expect(answer.status).toBe(200);
      }
      expect(Math.min(...times), `answer times: ${times.map((time) => Math.round(time)).join(', ')} ms`).toBeLessThan(100);

      const memoryAfter = process.memoryUsage();
      const grown = memoryAfter.heapUsed + memoryAfter.external - (memoryBefore.heapUsed + memoryBefore.external);
      // A page is at most 1,000 deliveries (about 1.2 MB): 25 of them, not 25 copies of the whole log.
      expect(grown).toBeLessThan(150 * 1024 * 1024);
    } finally {
      for (const socket of sockets) socket.destroy();
      await big.close();
    }
  });
});

describe('the index of deliveries by transaction (D64)', () => {
  it('answers a transaction filter from deliveries made before and after earlier filtered pages, and after old ones are forgotten', async () => {
    const clock = new VirtualClock({ start: 0 });
    const dispatcher = new DeliveryDispatcher({ clock, config: { retention: { deliveries: 1500 } } });
    try {
      const made: { id: string; transactionId: string }[] = [];
      const record = (count: number) => {
        for (let index = 0; index < count; index++) {
          const transactionId = `idx_${made.length % 7}`;
          const delivery = dispatcher.enqueue({
            url: null,
            body: '{}',
            orderingKey: `idx_key_${made.length}`,
            successStatus: '2xx',
            family: 'sdk',
            event: 'transactionStatus',
            transactionId,
          });
          made.push({ id: delivery.id, transactionId });
        }
      };
      // What the filter must answer: the retained deliveries of the transaction, in creation order.
      const expected = (transactionId: string) =>
        made
          .slice(-1500)
          .filter((delivery) => delivery.transactionId === transactionId)
          .map((delivery) => delivery.id);
      const filtered = (transactionId: string) => dispatcher.list({ transactionId }).map((delivery) => delivery.id);

      record(100);
      expect(filtered('idx_3')).toEqual(expected('idx_3'));
      // Made after the index was last brought up to date: found too.
      record(50);
      expect(filtered('idx_3')).toEqual(expected('idx_3'));
      expect(filtered('idx_4')).toEqual(expected('idx_4'));
      // Beyond the retention of 1,500: the forgotten ones are not answered, and the index is built
      // again once they make up half of it; many rounds of that keep answering the same as a scan.
      for (let round = 0; round < 6; round++) {
        record(1_000);
        for (const transactionId of ['idx_0', 'idx_5', 'idx_6']) expect(filtered(transactionId)).toEqual(expected(transactionId));
      }
      expect(filtered('idx_none')).toEqual([]);
      expect(dispatcher.list()).toHaveLength(1500);
    } finally {
      await dispatcher.stop();
    }
  });

  it('indexes at most 20,000 deliveries per page: after a burst, the pages go on with a cursor and miss nothing', async () => {
    const clock = new VirtualClock({ start: 0 });
    const dispatcher = new DeliveryDispatcher({ clock });
    try {
      const ids: string[] = [];
      for (let index = 0; index < 50_000; index++) {
        const delivery = dispatcher.enqueue({
          url: null,
          body: '{}',
          orderingKey: `burst_key_${index}`,
          successStatus: '2xx',
          family: 'web',
          event: 'transactionStatus',
          transactionId: index % 10_000 === 9_999 ? 'burst_wanted' : `burst_${index}`,
        });
        if (index % 10_000 === 9_999) ids.push(delivery.id);
      }
      // The first page indexed 20,000: it holds the one found there and a cursor to go on.
      const first = dispatcher.page({ transactionId: 'burst_wanted' });
      expect(first.deliveries.map((delivery) => delivery.id)).toEqual(ids.slice(0, 2));
      expect(first.nextCursor).not.toBeNull();
      const second = dispatcher.page({ transactionId: 'burst_wanted', after: first.nextCursor! });
      expect(second.deliveries.map((delivery) => delivery.id)).toEqual(ids.slice(2, 4));
      const third = dispatcher.page({ transactionId: 'burst_wanted', after: second.nextCursor! });
      expect(third.deliveries.map((delivery) => delivery.id)).toEqual(ids.slice(4));
      expect(third.nextCursor).toBeNull();
      // Indexed now: one page answers them all.
      const again = dispatcher.page({ transactionId: 'burst_wanted' });
      expect(again.deliveries.map((delivery) => delivery.id)).toEqual(ids);
      expect(again.nextCursor).toBeNull();
    } finally {
      await dispatcher.stop();
    }
  });
});
