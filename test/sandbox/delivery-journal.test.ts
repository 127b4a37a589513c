/**
 * The delivery record as the shared store keeps it (delivery/journal.ts), without PostgreSQL: two
 * dispatchers, each on a store whose deliveries collection hands every row it writes to the other
 * as JSON, the way the shared store tells a process of another's rows. What one records, the other
 * restores: the same view, byte for byte, and the same signature, made with the key its family
 * registered for the signer; no row holds the key. (test/shared/two-sandboxes.test.ts does the same
 * on a real database.) A delivery pending on a process that is gone is sent by the other, signed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifySdkSignature } from '../../src/signature.js';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryDispatcher } from '../../src/sandbox/delivery/index.js';
import { MemoryStore, type ExternalChange, type Store } from '../../src/sandbox/store.js';

const KEY = 'partner-private-key-journal-77';
const PASSWORD = 'merchant-password-journal-88';

/** A memory store whose rows, once written, reach `peer()`'s listeners as JSON. */
function linkedStore(peer: () => Listeners): { store: Store & { readonly changing: boolean }; listeners: Listeners; rows: Map<string, string> } {
  const memory = new MemoryStore();
  const listeners: Listeners = new Map();
  const rows = new Map<string, string>();
  let changing = false;
  const store: Store & { readonly changing: boolean } = {
    shared: true,
    get changing() {
      return changing;
    },
    clear: () => memory.clear(),
    unit: (work) => {
      changing = true;
      try {
        return memory.unit(work);
      } finally {
        changing = false;
      }
    },
    observe: (name, listener) => void listeners.set(name, listener as ExternalChange<unknown>),
    collection<T>(name: string) {
      const inner = memory.collection<T>(name);
      return {
        get: (id: string) => inner.get(id),
        has: (id: string) => inner.has(id),
        // The memory store underneath holds the rows; it asks for a unit of its own.
        delete: (id: string) => memory.unit(() => inner.delete(id)),
        values: () => inner.values(),
        get size() {
          return inner.size;
        },
        set(id: string, value: T) {
          memory.unit(() => inner.set(id, value));
          const json = JSON.stringify(value);
          rows.set(id, json);
          peer().get(name)?.(id, JSON.parse(json), undefined);
        },
      };
    },
  };
  return { store, listeners, rows };
}
type Listeners = Map<string, ExternalChange<unknown>>;

const dispatchers: DeliveryDispatcher[] = [];
const clocks: VirtualClock[] = [];
afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
  for (const clock of clocks.splice(0)) clock.stop();
});

/** A request a dispatcher sent. */
interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Two dispatchers, `a` and `b`, on linked stores. Their requests never answer unless `bAnswers`
 * lists what `b` sent (each answered 200); `live` is the set of owners connected to the database,
 * so deleting `a` from it makes `a`'s pending deliveries `b`'s to take over.
 */
function pair(options: { bAnswers?: Sent[]; live?: Set<string> } = {}) {
  const live = options.live ?? new Set(['a', 'b']);
  let b: ReturnType<typeof linkedStore> | undefined;
  const a = linkedStore(() => b!.listeners);
  b = linkedStore(() => a.listeners);
  const make = (store: Store & { readonly changing: boolean }, owner: string, answers?: Sent[]) => {
    const clock = new VirtualClock();
    // Never answers: the deliveries stay pending, as one in flight when its process died.
    const hang = (_url: unknown, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('stopped'))));
    const answer = async (url: unknown, init?: RequestInit) => {
      answers!.push({ url: String(url), headers: Object.fromEntries(new Headers(init?.headers).entries()), body: String(init?.body) });
      return new Response('', { status: 200 });
    };
    const dispatcher = new DeliveryDispatcher({ clock, fetch: (answers === undefined ? hang : answer) as typeof fetch });
    dispatcher.signWith('sdk', (partnerId) => (partnerId === 'partner_journal' ? KEY : undefined));
    dispatcher.signWith('gateway', (merchantId) => (merchantId === 'merchant_journal' ? PASSWORD : undefined));
    dispatcher.template('sdk.transactionStatus', (id, status) => JSON.stringify({ merchantTransactionId: id, status }));
    dispatcher.share(store, owner, async () => new Set(live));
    dispatchers.push(dispatcher);
    clocks.push(clock);
    return dispatcher;
  };
  return { a: make(a.store, 'a'), b: make(b.store, 'b', options.bAnswers), rowsOfA: a.rows, listenersOfB: b.listeners };
}

/**
 * Two pending deliveries on `dispatcher`: an SDK one kept compact (a template and its data) and a
 * gateway one with its body, each with its signer; their transactions are `<prefix>_1` and `_2`.
 */
function enqueueBoth(dispatcher: DeliveryDispatcher, prefix: string) {
  return [
    dispatcher.enqueue({
      url: 'http://127.0.0.1:9/sdk',
      body: { template: 'sdk.transactionStatus', data: 'SUCCESS' },
      signer: 'partner_journal',
      orderingScope: 'sdk:partner_journal:',
      successStatus: 200,
      family: 'sdk',
      event: 'transactionStatus',
      transactionId: `${prefix}_1`,
    }),
    dispatcher.enqueue({
      url: 'http://127.0.0.1:9/gateway',
      body: JSON.stringify({ refund: { id: `rfnd_${prefix}`, status: 'SUCCESS' } }),
      signer: 'merchant_journal',
      orderingScope: 'gateway:merchant_journal:',
      successStatus: '2xx-3xx',
      family: 'gateway',
      event: 'refundUpdated',
      transactionId: `${prefix}_2`,
    }),
  ] as const;
}

describe('a delivery restored from the shared store', () => {
  it('is the same record: the same view, and a signature that verifies with the signer\'s key', () => {
    const { a, b, rowsOfA } = pair();
    const [compact, full] = enqueueBoth(a, 'jrn');
    for (const written of [compact, full]) {
      const restored = b.get(written.id);
      const { attempts: _attempts, ...same } = written;
      expect(restored).toMatchObject(same);
      expect(restored!.headers['X-Signature']).toBeDefined();
      expect(verifySdkSignature(restored!.headers['X-Signature']!, restored!.body, written.family === 'sdk' ? KEY : PASSWORD)).toBe(true);
      expect(restored!.orderingKey).toBe(written.orderingKey);
    }
    expect(rowsOfA.size).toBe(2);
    for (const row of rowsOfA.values()) {
      expect(row).not.toContain(KEY);
      expect(row).not.toContain(PASSWORD);
      expect(JSON.parse(row)).toMatchObject({ signer: expect.stringMatching(/^(partner|merchant)_journal$/), owner: 'a' });
    }
  });

  it('is not signed when its family knows no key of its signer', () => {
    const { a, b } = pair();
    const written = a.enqueue({
      url: 'http://127.0.0.1:9/sdk',
      body: '{}',
      signer: 'someone_else',
      orderingScope: 'sdk:someone_else:',
      successStatus: 200,
      family: 'sdk',
      event: 'transactionStatus',
      transactionId: 'jrn_3',
    });
    expect(written.headers['X-Signature']).toBeUndefined();
    expect(b.get(written.id)!.headers['X-Signature']).toBeUndefined();
  });
});

describe('an event with no receiver in the shared store', () => {
  const notSent = (dispatcher: DeliveryDispatcher) =>
    dispatcher.enqueue({
      url: null,
      body: { template: 'sdk.transactionStatus', data: 'FAILURE' },
      signer: 'partner_journal',
      orderingScope: 'sdk:partner_journal:',
      successStatus: 200,
      family: 'sdk',
      event: 'transactionStatus',
      transactionId: 'jrn_expired',
    });

  it('is written short, without what follows from its row id and status, and restored the same', () => {
    const { a, b, rowsOfA } = pair();
    const written = notSent(a);
    expect(written.status).toBe('not_sent');
    const row = JSON.parse([...rowsOfA.values()][0]!) as Record<string, unknown>;
    for (const field of ['id', 'eventId', 'url', 'reason', 'attempts', 'nextAttemptAt', 'completedAt']) expect(row).not.toHaveProperty(field);
    expect(row).toMatchObject({ status: 'not_sent', transactionId: 'jrn_expired', owner: 'a' });
    expect(b.get(written.id)).toEqual(written);
  });

  it('is read the same from a row in the longer form earlier versions wrote', () => {
    const first = pair();
    const written = notSent(first.a);
    const [id, short] = [...first.rowsOfA.entries()][0]!;
    const long = {
      ...(JSON.parse(short) as Record<string, unknown>),
      id,
      eventId: written.eventId,
      url: null,
      reason: written.reason,
      attempts: [],
      nextAttemptAt: null,
      completedAt: null,
    };
    const second = pair();
    second.listenersOfB.get('sandbox.deliveries')!(id, long, undefined);
    expect(second.b.get(id)).toEqual(written);
    expect(second.b.get(id)!.reason).toBe('No webhook URL is configured.');
  });
});

describe('a delivery taken over from a process that is gone', () => {
  it('is sent by the other process signed with the key its family registered for the signer', async () => {
    const sent: Sent[] = [];
    const live = new Set(['a', 'b']);
    const { a } = pair({ bAnswers: sent, live });
    const written = enqueueBoth(a, 'jrn_take');
    expect(sent).toEqual([]);
    // `a` is gone: `b` takes its pending deliveries over at its next look (every 2 s).
    live.delete('a');
    await vi.waitFor(() => expect(sent).toHaveLength(2), { timeout: 15_000, interval: 100 });
    for (const delivery of written) {
      const request = sent.find((item) => item.url === delivery.url)!;
      expect(request.body).toBe(delivery.body);
      expect(request.headers['x-event-id']).toBe(delivery.eventId);
      expect(request.headers['x-signature'], `the ${delivery.family} delivery taken over is signed`).toBeDefined();
      expect(verifySdkSignature(request.headers['x-signature']!, request.body, delivery.family === 'sdk' ? KEY : PASSWORD)).toBe(true);
    }
  });
});
