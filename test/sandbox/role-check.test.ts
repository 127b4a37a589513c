/**
 * The role check (`--role-port`, role-check.ts): what a load balancer's health check reads on each
 * kind of process, and a port that cannot be listened on. The shared processes' checks are in
 * test/shared/roles.test.ts.
 */
import { connect, createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/server.js';
import { startRoleCheck, type ProcessRole } from '../../src/sandbox/role-check.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

describe('the role check', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const open of opened) await open.close();
  });

  it('answers 200 with the role on a sandbox that serves (in memory; the writer on the shared store), on any path, and HEAD without a body', async () => {
    const t: TestSandbox = await startSandbox({ config: { rolePort: 0 } });
    opened.push(t);
    // `npm run test:shared` runs this file with every sandbox on PostgreSQL: alone, it is the writer.
    const role = t.sandbox.role;
    expect(['memory', 'writer']).toContain(role);
    const url = t.sandbox.roleCheckUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(t.url);
    for (const path of ['/', '/health', '/writer?x=1']) {
      const answer = await fetch(`${url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(await answer.json()).toEqual({ role, serves: true });
    }
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers 503 with Retry-After while the process forwards, 200 once it serves, as the role is at each check', async () => {
    let role: ProcessRole = 'forwarding';
    const check = await startRoleCheck(() => role, 0, '127.0.0.1');
    opened.push(check);
    const forwarding = await fetch(check.url);
    expect(forwarding.status).toBe(503);
    expect(forwarding.headers.get('retry-after')).toBe('1');
    expect(await forwarding.json()).toEqual({ role: 'forwarding', serves: false });
    role = 'taking over';
    expect((await fetch(check.url)).status).toBe(503);
    role = 'writer';
    const writer = await fetch(check.url);
    expect(writer.status).toBe(200);
    expect(writer.headers.get('retry-after')).toBeNull();
    expect(await writer.json()).toEqual({ role: 'writer', serves: true });
    role = 'deposed';
    expect(await (await fetch(check.url)).json()).toEqual({ role: 'deposed', serves: false });
  });

  it('refuses other methods with 405 and Allow, in the sandbox error format', async () => {
    const check = await startRoleCheck(() => 'writer', 0, '127.0.0.1');
    opened.push(check);
    const answer = await fetch(check.url, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, HEAD');
    expect(await answer.json()).toEqual({ errorCode: 'METHOD_NOT_ALLOWED', message: 'This path accepts GET, HEAD only.', requestId: expect.stringMatching(/^req_/) });
  });

  it('answers a request it cannot parse 400 in the sandbox error format, and closes the connection', async () => {
    const check = await startRoleCheck(() => 'writer', 0, '127.0.0.1');
    opened.push(check);
    const { hostname, port } = new URL(check.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('Connection: close');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      errorCode: 'BAD_REQUEST',
      message: 'The role check could not read this request: send GET / over HTTP/1.1.',
      requestId: expect.stringMatching(/^req_/),
    });
  });

  it('does not start on a port in use: it says which, and the sandbox is not left listening', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const sandbox = await createSandbox({ config: { rolePort: port } });
    try {
      await expect(sandbox.listen(0, '127.0.0.1')).rejects.toThrow(`the role check's port ${port} (--role-port) is in use; choose another`);
      expect(sandbox.server.listening).toBe(false);
    } finally {
      await sandbox.close();
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
