/**
 * HTTP details of the sandbox: request ids (D29) in the header, the error body and the log line;
 * HEAD; a request without Host or with two Host or Authorization headers; requests not received in time
 * (408); pipelined requests answered in order, each seeing the ones before it; and what the
 * request log leaves out (queries, credentials, the dashboard invitation token).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRequestId, type Logger } from '../../src/sandbox/router.js';
import { MERCHANT_AUTH, startGateway, type GatewayTest } from '../support/gateway.js';
import { EXTRAS_AUTH, PRIVATE_KEY, waitFor } from '../support/sandbox.js';
import { sdkSignature } from '../../src/signature.js';

const lines: string[] = [];
const errors: string[] = [];
const logger: Logger = {
  info: (message) => lines.push(message),
  warn: (message) => lines.push(message),
  error: (message, error) => errors.push(`${message}: ${String(error)}`),
};

let t: GatewayTest;

beforeAll(async () => {
  t = await startGateway({ logger, logRequests: true, timeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 100 } });
});
afterAll(async () => {
  await t?.close();
  expect(errors).toEqual([]);
});

/** Sends bytes on a new connection and resolves with everything the sandbox wrote until it closed. */
function raw(request: string, options: { keepOpen?: boolean } = {}): Promise<string> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      if (options.keepOpen === true) socket.write(request);
      else socket.end(request);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: any } {
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: body === '' ? undefined : JSON.parse(body) };
}

/** The `count` log lines written since `from` (a line is written once the answer is sent). */
async function logSince(from: number, count: number): Promise<string[]> {
  await waitFor(() => (lines.length - from >= count ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return lines.slice(from);
}

describe('request ids (D29)', () => {
  it('an error carries one id in X-Request-Id, in the body and in its log line', async () => {
    const from = lines.length;
    const response = await fetch(`${t.url}/api/merchant/m_1`, { headers: { Authorization: 'Basic bm9wZTpub3Bl' } });
    const body = (await response.json()) as Record<string, unknown>;
    const id = response.headers.get('x-request-id');
    expect(response.status).toBe(401);
    expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(body.requestId).toBe(id);
    expect(await logSince(from, 1)).toEqual([expect.stringMatching(new RegExp(`^GET /api/merchant/m_1 401 \\d+ ms ${id}$`))]);
  });

  it('takes the client X-Request-Id when it is a short safe token, in both error formats', async () => {
    const gateway = await t.request('GET', '/api/merchant/m_1', { headers: { 'X-Request-Id': 'pg-trace.42_a' } });
    expect(gateway.headers.get('x-request-id')).toBe('pg-trace.42_a');
    expect(JSON.parse(gateway.text).requestId).toBe('pg-trace.42_a');

    const sdk = await t.sdk('/merchant/credit/checkTransactionStatus', { merchantTransactionId: 'nobody' }, { signature: null });
    expect(sdk.status).toBe(401);
    expect(JSON.parse(sdk.text)).toEqual({ message: 'AUTHORIZATION_FAILED', detail: expect.any(String), requestId: sdk.headers.get('x-request-id') });
  });

  it('makes its own id for an X-Request-Id that is too long, unsafe or repeated', async () => {
    for (const offered of ['x'.repeat(65), 'a b', '<script>', 'a,b', 'a/b', '']) {
      const answer = await t.request('GET', '/api/merchant/m_1', { headers: { 'X-Request-Id': offered } });
      expect(answer.headers.get('x-request-id'), offered).toMatch(/^req_[0-9a-f]{24}$/);
    }
    const repeated = parseRaw(await raw('GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: one\r\nX-Request-Id: two\r\nConnection: close\r\n\r\n'));
    expect(repeated.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(repeated.body.requestId).toBe(repeated.headers['x-request-id']);
  });

  it('a successful answer carries the id in the header only', async () => {
    const answer = await t.request('GET', '/sandbox/clock');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
    expect(answer.body.requestId).toBeUndefined();
  });

  it('every request gets a different id', async () => {
    const ids = new Set<string | null>();
    for (let i = 0; i < 20; i++) ids.add((await fetch(`${t.url}/nothing/here`)).headers.get('x-request-id'));
    expect(ids.size).toBe(20);
  });

  it('ids made in a row stay distinct and of one form across refills of their random pool (D200)', () => {
    const ids = Array.from({ length: 1000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(1000);
  });

  it('the webhook stream, which writes its own head, carries the id too', async () => {
    const controller = new AbortController();
    const response = await fetch(`${t.url}/sandbox/webhooks/stream`, { signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    controller.abort();
  });
});

describe('request bodies', () => {
  it('reads a chunked body, and answers a request that declares an empty one (Content-Length: 0, an empty chunked body) like one without', async () => {
    const chunked = parseRaw(
      await raw('POST /sandbox/clock/advance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n8\r\n{"ms":1}\r\n0\r\n\r\n'),
    );
    expect(chunked.status).toBe(200);
    for (const framing of ['Content-Length: 0\r\n', 'Transfer-Encoding: chunked\r\n']) {
      const body = framing.startsWith('Transfer') ? '0\r\n\r\n' : '';
      const clock = parseRaw(await raw(`GET /sandbox/clock HTTP/1.1\r\nHost: x\r\n${framing}Connection: close\r\n\r\n${body}`));
      expect(clock.status, framing).toBe(200);
      expect(clock.body.now, framing).toEqual(expect.any(String));
      const advance = parseRaw(await raw(`POST /sandbox/clock/advance HTTP/1.1\r\nHost: x\r\n${framing}Connection: close\r\n\r\n${body}`));
      expect(advance.status, framing).toBe(400);
      expect(advance.body.errorCode, framing).toBe('BAD_REQUEST');
    }
  });
});

describe('pipelined requests', () => {
  it('a read pipelined after a write sees the write, even when the write waits for its body', async () => {
    const body = JSON.stringify({ ms: 3_600_000 });
    const write = `POST /sandbox/clock/advance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const read = 'GET /sandbox/clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const answers = (await raw(write + read))
      .split(/(?=HTTP\/1\.1 )/)
      .map((answer) => parseRaw(answer));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const [advanced, clock] = answers.map((answer) => answer.body as { offsetMs: number; nowMs: number });
    expect(advanced?.offsetMs).toBeGreaterThanOrEqual(3_600_000);
    expect(clock?.offsetMs).toBe(advanced?.offsetMs);
    expect(clock?.nowMs).toBeGreaterThanOrEqual(advanced?.nowMs ?? Infinity);
  });
});

describe('HEAD', () => {
  it('answers a GET resource like GET, without the body', async () => {
    const get = await fetch(`${t.url}/api/merchant/transaction/none`, { headers: { Authorization: MERCHANT_AUTH } });
    const getText = await get.text();
    const head = await fetch(`${t.url}/api/merchant/transaction/none`, { method: 'HEAD', headers: { Authorization: MERCHANT_AUTH } });
    expect(head.status).toBe(get.status);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getText)));
    expect(await head.text()).toBe('');

    const clock = await fetch(`${t.url}/sandbox/clock`, { method: 'HEAD' });
    expect(clock.status).toBe(200);
    const page = await fetch(`${t.url}/`, { method: 'HEAD' });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')]);
  });

  it('is listed in Allow beside GET, and refused (405) on a POST-only path', async () => {
    const post = await fetch(`${t.url}/merchant/credit/initiateTransaction`, { method: 'HEAD' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('POST');
    const put = await fetch(`${t.url}/sandbox/clock`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('malformed requests', () => {
  it('two Authorization headers: 400 asking for exactly one, in the family format', async () => {
    const answer = parseRaw(
      await raw(
        `GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${MERCHANT_AUTH}\r\nAuthorization: ${EXTRAS_AUTH}\r\nConnection: close\r\n\r\n`,
      ),
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      errorCode: 'BAD_REQUEST',
      message: 'The request has 2 Authorization headers; send exactly one.',
      details: [{ field: 'Authorization', issue: 'must be given exactly once' }],
      requestId: answer.headers['x-request-id'],
    });
    // The same credentials twice are refused too: which one counts would be a guess.
    const same = parseRaw(
      await raw(`GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${MERCHANT_AUTH}\r\nAuthorization: ${MERCHANT_AUTH}\r\nConnection: close\r\n\r\n`),
    );
    expect(same.status).toBe(400);
  });

  it('two Host headers: 400 asking for exactly one, in the family format', async () => {
    const sdk = parseRaw(
      await raw(
        'POST /merchant/credit/checkTransactionStatus HTTP/1.1\r\nHost: x\r\nhost: y\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ),
    );
    expect(sdk.status).toBe(400);
    expect(sdk.body).toEqual({
      message: 'BAD_REQUEST',
      detail: 'The request has 2 Host headers; send exactly one.',
      requestId: sdk.headers['x-request-id'],
    });
    const gateway = parseRaw(await raw(`GET /api/merchant/m_1 HTTP/1.1\r\nHost: x\r\nHost: x\r\nAuthorization: ${MERCHANT_AUTH}\r\nConnection: close\r\n\r\n`));
    expect(gateway.status).toBe(400);
    expect(gateway.body).toEqual({
      errorCode: 'BAD_REQUEST',
      message: 'The request has 2 Host headers; send exactly one.',
      details: [{ field: 'Host', issue: 'must be given exactly once' }],
      requestId: gateway.headers['x-request-id'],
    });
  });

  it('no Host header: the family 400 instead of an empty one', async () => {
    const sdk = parseRaw(
      await raw('POST /merchant/credit/checkTransactionStatus HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'),
    );
    expect(sdk.status).toBe(400);
    expect(sdk.body).toEqual({ message: 'BAD_REQUEST', detail: expect.stringContaining('no Host header'), requestId: sdk.headers['x-request-id'] });

    const gateway = parseRaw(await raw('GET /api/merchant/m_1 HTTP/1.1\r\nConnection: close\r\n\r\n'));
    expect(gateway.status).toBe(400);
    expect(gateway.body).toMatchObject({ errorCode: 'BAD_REQUEST', details: [{ field: 'Host', issue: 'is required' }] });

    // HTTP/1.0 does not require Host.
    const old = parseRaw(await raw('GET /sandbox/clock HTTP/1.0\r\n\r\n'));
    expect(old.status).toBe(200);
  });

  it('headers not received in time: 408 with a JSON body, and a log line', async () => {
    const from = lines.length;
    const answer = parseRaw(await raw('GET /sandbox/clock HTTP/1.1\r\nHost: x\r\n', { keepOpen: true }));
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.body).toEqual({
      errorCode: 'REQUEST_TIMEOUT',
      message: 'The request line and headers were not received within 300 ms.',
      requestId: answer.headers['x-request-id'],
    });
    expect(await logSince(from, 1)).toContain(`- - 408 0 ms ${answer.headers['x-request-id']}`);
  });

  it('headers not received in time after an answered request on the same connection: 408, not the connection dropped', async () => {
    const answers = await raw('GET /sandbox/clock HTTP/1.1\r\nHost: x\r\n\r\nGET /sandbox/clock HTTP/1.1\r\nHost: x\r\n', { keepOpen: true });
    const [first = '', second = ''] = answers.split(/(?=HTTP\/1\.1 )/);
    expect(parseRaw(first).status).toBe(200);
    const late = parseRaw(second);
    expect(late.status).toBe(408);
    expect(late.body).toEqual({
      errorCode: 'REQUEST_TIMEOUT',
      message: 'The request line and headers were not received within 300 ms.',
      requestId: late.headers['x-request-id'],
    });
  });

  it('a body not received in time: 408 in the family format', async () => {
    const body = '{"merchantTransactionId":"late_1"}';
    const signature = sdkSignature(body, PRIVATE_KEY);
    const sdk = parseRaw(
      await raw(
        `POST /merchant/credit/checkTransactionStatus HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Partnerid: partner_test\r\nX-Signature: ${signature}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
        { keepOpen: true },
      ),
    );
    expect(sdk.status).toBe(408);
    expect(sdk.body).toEqual({
      message: 'REQUEST_TIMEOUT',
      detail: expect.stringContaining('The request body was not received in full'),
      requestId: sdk.headers['x-request-id'],
    });

    const gateway = parseRaw(
      await raw(`POST /api/merchant HTTP/1.1\r\nHost: x\r\nAuthorization: ${MERCHANT_AUTH}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mer`, {
        keepOpen: true,
      }),
    );
    expect(gateway.status).toBe(408);
    expect(gateway.body).toMatchObject({ errorCode: 'REQUEST_TIMEOUT', requestId: gateway.headers['x-request-id'] });
  });
});

describe('the request log', () => {
  it('never shows the dashboard invitation token, the query or credentials', async () => {
    const { id } = await t.createMerchant();
    const access = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, {
      dashboardUser: { name: 'Priya Shah', email: 'priya@example.in' },
    });
    expect(access.status).toBe(201);
    const loginUrl = new URL(access.body.dashboardAccess.loginUrl as string);
    const token = loginUrl.pathname.split('/').at(-1) as string;
    expect(token.length).toBeGreaterThan(8);

    const from = lines.length;
    expect((await fetch(loginUrl)).status).toBe(200);
    await fetch(`${loginUrl.href}/`); // not a route: 404, still not logged
    await fetch(`${t.url}/sandbox/gateway/dashboard/INVITATIONS/${token}?x=1`);
    await fetch(`${t.url}/sandbox/clock?apiKey=secret_in_query`, { headers: { Authorization: MERCHANT_AUTH } });
    const logged = await logSince(from, 4);
    expect(logged).toEqual([
      expect.stringMatching(/^GET \/sandbox\/gateway\/dashboard\/invitations\/\[redacted\] 200 \d+ ms req_/),
      expect.stringMatching(/^GET \/sandbox\/gateway\/dashboard\/invitations\/\[redacted\]\/ 404 \d+ ms req_/),
      expect.stringMatching(/^GET \/sandbox\/gateway\/dashboard\/INVITATIONS\/\[redacted\] 404 \d+ ms req_/),
      expect.stringMatching(/^GET \/sandbox\/clock 200 \d+ ms req_/),
    ]);
    const all = lines.join('\n');
    expect(all).not.toContain(token);
    expect(all).not.toContain('secret_in_query');
    expect(all).not.toContain(MERCHANT_AUTH.slice('Basic '.length));
    expect(all).not.toContain('pg_test_secret');
  });

  it('normalises the path before it looks for the token: duplicate slashes, dot segments, %2F, absolute-form', async () => {
    const { id } = await t.createMerchant();
    const access = await t.merchantApi('POST', `/api/merchant/${id}/dashboard-access`, {
      dashboardUser: { name: 'Ravi Rao', email: 'ravi@example.in' },
    });
    const token = new URL(access.body.dashboardAccess.loginUrl as string).pathname.split('/').at(-1) as string;
    const from = lines.length;
    const doubled = await fetch(`${t.url}//sandbox/gateway/dashboard/invitations/${token}`);
    expect(await doubled.text()).not.toContain(token);
    await fetch(`${t.url}/sandbox/gateway/./dashboard//invitations/${token}`);
    await fetch(`${t.url}/sandbox/gateway/dashboard/x/../invitations/${token}`);
    await fetch(`${t.url}/sandbox/gateway/dashboard%2Finvitations%2F${token}`);
    const absolute = await raw(`GET http://x/sandbox/gateway/dashboard/invitations/${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(absolute).not.toContain(token);
    const logged = await logSince(from, 5);
    for (const line of logged.slice(0, 4)) expect(line).toMatch(/^GET \/sandbox\/gateway\/dashboard\/invitations\/\[redacted\] \d{3} \d+ ms req_/);
    expect(logged[4]).toMatch(/^GET \/sandbox\/gateway\/dashboard\/invitations\/\[redacted\] 400 /);
    expect(lines.join('\n')).not.toContain(token);
  });
});
