/**
 * A cheap load generator for the attacks that need 100,000s of small requests: raw HTTP/1.1 over a
 * few keep-alive sockets, `depth` requests pipelined on each. node:http's client cost about as
 * much CPU per request as the sandbox's answer did, and on a 2-core machine the driver's work is
 * taken from the sandbox; written by hand because it needs only this much of HTTP: fixed requests
 * out, answers with a `Content-Length` (every sandbox answer has one) in.
 */
import { connect, type Socket } from 'node:net';

export interface PipelineOptions {
  /** Sockets at once (default 4). */
  sockets?: number;
  /** Requests in flight on each (default 32). */
  depth?: number;
  /** Called with each answer's status, in order per socket. */
  onStatus?: (index: number, status: number, body: string) => void;
  /** Checked before each request is written: true stops the run. */
  stop?: () => boolean;
}

/** One raw request: method, path, headers and a JSON body. */
export function rawRequest(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** The answers complete at the start of `buffer`: [status, body] each, and the bytes they took. */
export function parseAnswers(buffer: Buffer): { answers: [number, string][]; used: number } {
  const answers: [number, string][] = [];
  let used = 0;
  for (;;) {
    const headEnd = buffer.indexOf('\r\n\r\n', used, 'latin1');
    if (headEnd < 0) break;
    const head = buffer.toString('latin1', used, headEnd);
    const status = Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(head)?.[1] ?? 0);
    const length = Number(/\r\ncontent-length:\s*([0-9]+)/i.exec(head)?.[1] ?? 0);
    const end = headEnd + 4 + length;
    if (end > buffer.length) break;
    answers.push([status, buffer.toString('utf8', headEnd + 4, end)]);
    used = end;
  }
  return { answers, used };
}

/** Sends `make(0)` .. `make(count - 1)` to `base`; resolves to how many were answered. */
export async function pipelined(base: string, count: number, make: (index: number) => string, options: PipelineOptions = {}): Promise<number> {
  const { hostname, port } = new URL(base);
  const depth = options.depth ?? 32;
  let next = 0;
  let answered = 0;
  const stop = options.stop ?? (() => false);
  const one = () =>
    new Promise<void>((resolve) => {
      const socket: Socket = connect(Number(port), hostname);
      const inFlight: number[] = [];
      let pending: Buffer = Buffer.alloc(0);
      const fill = () => {
        const parts: string[] = [];
        while (inFlight.length < depth && next < count && !stop()) {
          inFlight.push(next);
          parts.push(make(next++));
        }
        if (parts.length > 0) socket.write(parts.join(''));
        if (inFlight.length === 0) socket.end();
      };
      socket.on('connect', fill);
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        const { answers, used } = parseAnswers(pending);
        pending = pending.subarray(used);
        for (const [status, body] of answers) {
          answered++;
          options.onStatus?.(inFlight.shift()!, status, body);
        }
        if (answers.length > 0) fill();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
  await Promise.all(Array.from({ length: options.sockets ?? 4 }, one));
  return answered;
}
