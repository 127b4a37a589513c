/**
 * The clients' cost per request against a plain fetch of the same request, both against one local
 * keep-alive server, in alternating rounds.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTransactionalApiClient } from '../src/clients/gateway.js';
import { createSdkClient } from '../src/clients/sdk.js';
import { sdkSignature } from '../src/signature.js';
import { compareAsync, type Pair } from './measure.js';

export interface ClientFigures {
  client: string;
  /** Client time per request ÷ plain fetch time per request (1.0 = no overhead). */
  timeRatio: number;
  clientMicroseconds: number;
  fetchMicroseconds: number;
}

const toFigures = (client: string, pair: Pair): ClientFigures => ({
  client,
  timeRatio: 1 / pair.ratio,
  clientMicroseconds: 1e6 / pair.subjectOpsPerSecond,
  fetchMicroseconds: 1e6 / pair.baselineOpsPerSecond,
});

export async function benchClients(): Promise<ClientFigures[]> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = req.method === 'GET' ? '{"transactions":[],"nextCursor":null}' : '{"message":"SUCCESS"}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const key = 'bench_private_key';
    const sdk = createSdkClient({ baseUrl: base, partnerId: 'partner_bench', privateKey: key });
    const body = JSON.stringify({ merchantTransactionId: 'ord_bench_1' });
    const sdkPair = await compareAsync(
      async () => (await sdk.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'ord_bench_1' } })).data,
      async () => {
        const response = await fetch(`${base}/merchant/credit/checkTransactionStatus`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Partnerid': 'partner_bench', 'X-Signature': sdkSignature(body, key) },
          body,
        });
        return response.json();
      },
      1500,
      9,
    );
    const gateway = createTransactionalApiClient({ baseUrl: base, credentials: { username: 'u_bench', password: 'p_bench' } });
    const authorization = `Basic ${Buffer.from('u_bench:p_bench').toString('base64')}`;
    const gatewayPair = await compareAsync(
      async () => (await gateway.GET('/api/merchant/transaction', { params: { query: { limit: 20 } } })).data,
      async () => (await fetch(`${base}/api/merchant/transaction?limit=20`, { headers: { Authorization: authorization } })).json(),
      1500,
      9,
    );
    // With a time limit, against a plain fetch given the same limit.
    const timed = createSdkClient({ baseUrl: base, partnerId: 'partner_bench', privateKey: key, timeoutMs: 10_000 });
    const timedPair = await compareAsync(
      async () => (await timed.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'ord_bench_1' } })).data,
      async () => {
        const response = await fetch(`${base}/merchant/credit/checkTransactionStatus`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Partnerid': 'partner_bench', 'X-Signature': sdkSignature(body, key) },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        return response.json();
      },
      1500,
      9,
    );
    return [
      toFigures('sdk client (signed POST)', sdkPair),
      toFigures('gateway client (Basic GET)', gatewayPair),
      toFigures('sdk client, timeoutMs set', timedPair),
    ];
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
