/**
 * A local HTTP server that stands for a shop's webhook endpoint and answers the way that shop's
 * software answers (a WooCommerce plugin redirects with 302, a Magento controller answers 200 with
 * an empty body), recording every request it gets: method, path and query, headers, raw body.
 * Listens on a free port (port 0).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ShopAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface ShopRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  answeredWith: number;
}

export interface ShopReceiver {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  received: ShopRequest[];
  close(): Promise<void>;
}

/** At most this many requests are recorded; later ones are answered and counted as dropped. */
const MAX_RECORDED = 1_000;

export async function startShopReceiver(answer: (request: Omit<ShopRequest, 'answeredWith'>, origin: string) => ShopAnswer): Promise<ShopReceiver> {
  const received: ShopRequest[] = [];
  let origin = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const reply = answer(request, origin);
      if (received.length < MAX_RECORDED) received.push({ ...request, answeredWith: reply.status });
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
