/**
 * The role check (`--role-port`): a second listener, on the sandbox's host, that tells a load
 * balancer's health check whether this process serves requests itself. A `GET` (or `HEAD`) of any
 * path answers 200 `{"role":"writer","serves":true}` on a shared sandbox's writer (`"memory"` on a
 * sandbox in memory), and 503 with `Retry-After` and `{"role":"forwarding","serves":false}` on a
 * process that forwards to the writer (or `"taking over"`, `"deposed"`: shared-role.ts). A load
 * balancer that checks it sends every connection straight to the writer, without the hop through a
 * forwarding process (docs/sandbox.md, "A shared sandbox"), and to another process within its
 * check interval once that one took the writer's role.
 *
 * A port of its own, not a path of the sandbox's: every connection a forwarding process accepts
 * is relayed to the writer as it is (relay.ts), so a path of the sandbox's would be answered by
 * the writer. It says only the role (no address, no state), and reads nothing of the request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorHelpers } from './errors.js';
import { newRequestId, rawErrorAnswer, sendWithoutBody } from './io.js';
import { ConfigError } from './settings.js';
import type { Role } from './shared-role.js';

export type ProcessRole = 'memory' | Role;

/** The role check's errors, in the sandbox's format. */
const ERRORS = errorHelpers('apiError');
/** Seconds a load balancer is asked to wait before checking a process that does not serve again. */
const RETRY_AFTER_SECONDS = 1;

export interface RoleCheck {
  /** `http://host:port` of the check. */
  readonly url: string;
  close(): Promise<void>;
}

/** The answer to a check: its status and body. */
function roleAnswer(role: ProcessRole): { status: 200 | 503; body: { role: ProcessRole; serves: boolean } } {
  const serves = role === 'memory' || role === 'writer';
  return { status: serves ? 200 : 503, body: { role, serves } };
}

/**
 * Listens on `port` of `host` (0: a free port) and answers each check with `roleOf()` as it is then;
 * a port that cannot be listened on is a {@link ConfigError} naming it and the flag.
 */
export async function startRoleCheck(roleOf: () => ProcessRole, port: number, host: string): Promise<RoleCheck> {
  const server: Server = createServer((request, response) => {
    const head = request.method === 'HEAD';
    if (request.method !== 'GET' && !head) {
      sendWithoutBody(request, response, ERRORS.methodNotAllowed(['GET', 'HEAD']));
      return;
    }
    const { status, body } = roleAnswer(roleOf());
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
      ...(status === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {}),
    });
    response.end(head ? undefined : text);
    // What a request sent beyond its head is not read: the check needs none of it.
    request.resume();
  });
  server.keepAliveTimeout = 5_000;
  // A request Node cannot parse: a JSON 400 in the sandbox's error format, not Node's bare one.
  server.on('clientError', (_error: Error, socket: Socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawErrorAnswer('Bad Request', ERRORS.badRequest('The role check could not read this request: send GET / over HTTP/1.1.'), newRequestId()));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'is in use' : error.code === 'EACCES' ? 'may not be used by this user' : `cannot be listened on (${error.code ?? error.message})`;
      reject(new ConfigError(`the role check's port ${port} (--role-port) ${why}; choose another`));
    });
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
