import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type Collection, type Store } from '../../src/sandbox/store.js';
import { EXTRAS_AUTH, startSandbox, type TestSandbox } from '../support/sandbox.js';

/** A store whose `broken` collections throw on every read: an unexpected failure of the service. */
class BrokenStore implements Store {
  private readonly inner = new MemoryStore();
  constructor(private readonly broken: readonly string[]) {}
  collection<T>(name: string): Collection<T> {
    const collection = this.inner.collection<T>(name);
    if (!this.broken.includes(name)) return collection;
    const fail = (): never => {
      throw new Error(`storage of ${name} is unavailable`);
    };
    return { get: fail, set: fail, has: fail, delete: fail, values: fail, size: 0 };
  }
  clear(): void {
    this.inner.clear();
  }
  unit<T>(work: () => T): T {
    return work();
  }
  observe(): void {}
  readonly shared = false;
}

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ store: new BrokenStore(['sdk.transactions', 'extras.identifications']) });
});
afterAll(async () => {
  await t.close();
});

describe('an unexpected failure', () => {
  it('answers the SDK family 500 INTERNAL_SERVER_ERROR and is logged without request data', async () => {
    const body = { merchantTransactionId: 'ord_broken', userPhoneNumber: '+919000000001', userId: 'u', amount: 100 };
    const answer = await t.sdk('/merchant/credit/initiateTransaction', body);
    expect(answer.status).toBe(500);
    expect(answer.body.message).toBe('INTERNAL_SERVER_ERROR');
    expect(t.loggedErrors).toHaveLength(1);
    expect(t.loggedErrors[0]).toContain('initiateSdkTransaction');
    expect(t.loggedErrors[0]).toContain('storage of sdk.transactions is unavailable');
    expect(t.loggedErrors[0]).not.toContain('ord_broken');
    expect(t.loggedErrors[0]).not.toContain('test_private_key');
    t.loggedErrors.length = 0;
  });

  it('answers the extras family 500 INTERNAL_SERVER_ERROR', async () => {
    const answer = await t.request('POST', '/service/database/merchant/user/feed/identification', {
      body: JSON.stringify({ userPhoneNumber: '+919000000001', identification: { panNumber: 'ABCDE1234F' } }),
      headers: { 'Content-Type': 'application/json', Authorization: EXTRAS_AUTH },
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ errorCode: 'INTERNAL_SERVER_ERROR', message: 'The service could not complete the request. Retry later.' });
    expect(t.loggedErrors).toHaveLength(1);
    expect(t.loggedErrors[0]).not.toContain('ABCDE1234F');
    expect(t.loggedErrors[0]).not.toContain('extras_test_secret');
    t.loggedErrors.length = 0;
  });

  it('leaves the rest of the sandbox working', async () => {
    const answer = await t.extras('/service/payments/merchant/user/credit/info?userPhoneNumber=%2B919000000003');
    expect(answer.status).toBe(200);
  });
});

/** Sends raw bytes and returns what came back on the socket. */
async function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const { connect } = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('a request Node cannot parse', () => {
  it('answers 431 with a JSON body for headers over the limit', async () => {
    const answer = await raw(t.url, `GET /sandbox/clock HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    const requestId = /\r\nX-Request-Id: (\S+)\r\n/.exec(answer)?.[1];
    expect(requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      errorCode: 'HEADERS_TOO_LARGE',
      message: 'The request headers exceed the limit of 16 KiB.',
      requestId,
    });
  });

  it('answers 400 with a JSON body for a malformed request line', async () => {
    const answer = await raw(t.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"errorCode":"BAD_REQUEST"');
  });
});
