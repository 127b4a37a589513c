/**
 * The contract kit (scripts/contract.ts, scripts/contract/): run against a Prism mock of every
 * family, against fake servers that break the contract on purpose, and against a small stateful
 * SDK-flow server, and the signatures the hook file puts on a request checked against the shared
 * test vectors.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES, type Family } from '../../scripts/families.js';
import { bundleOf, derefObject, operationsOf, requireDocument, type OperationEntry } from '../support/documents.js';
import { runContract, type ContractReport } from '../../scripts/contract/run.js';
import { verifySdkSignature } from '../../src/signature.js';
import { setSdkSignature, setWebSignature } from '../../scripts/contract/families/auth.js';
import type { Settings } from '../../scripts/contract/settings.js';
import type { DreddTransaction } from '../../scripts/contract/types.js';
import { startOnFreePort, stopChild } from '../support/processes.js';
import { vectors } from '../support/signature-vectors.js';

const root = resolve(import.meta.dirname, '../..');

/** One run of the kit starts Dredd in a child process; the gateway makes 77 transactions. */
const KIT_TIMEOUT_MS = 180_000;
/** Free ports for the Prism mocks, taken before they start. */
let PRISM_PORTS: Record<Family, number>;
type Json = Record<string, unknown>;

function bundled(family: Family): Json {
  return requireDocument(bundleOf(family));
}

function deref(document: Json, node: unknown): Json {
  return derefObject(document, node) ?? {};
}

/** The operations of `paths` (Dredd ignores `webhooks`). */
function operations(document: Json): OperationEntry[] {
  return operationsOf(document).filter((entry) => entry.kind === 'path');
}

/**
 * How many transactions Dredd makes of a document: one per (operation, response, media type).
 * Dredd makes none for a range (`4XX`) or `default` response.
 */
function documentedResponses(document: Json): number {
  let count = 0;
  for (const { operation } of operations(document)) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (!/^\d{3}$/.test(status)) continue;
      const content = deref(document, response).content as Json | undefined;
      count += content ? Object.keys(content).length : 1;
    }
  }
  return count;
}

/** The status code in a transaction name (`/path > summary > 404 > application/json`). */
function statusOf(name: string): number {
  const match = / > (\d{3})(?: > [^>]+)?$/.exec(name);
  if (!match) throw new Error(`no status in transaction name '${name}'`);
  return Number(match[1]);
}

async function listen(handler: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks), response));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
}

function sendJson(response: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  response.writeHead(status, { 'Content-Type': contentType });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

describe('contract kit against a Prism mock of each family', { timeout: KIT_TIMEOUT_MS }, () => {
  const prisms = new Map<Family, ChildProcess>();

  beforeAll(async () => {
    const started = await Promise.all(
      FAMILIES.map((family) =>
        startOnFreePort(
          (port) =>
            spawn(
              join(root, 'node_modules', '.bin', 'prism'),
              ['mock', '-h', '127.0.0.1', '-p', String(port), join(root, 'generated', 'openapi', `${family}.json`)],
              { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
            ),
          { ready: /Prism is listening on http:\/\/127\.0\.0\.1:\d+/ },
        ),
      ),
    );
    PRISM_PORTS = {} as Record<Family, number>;
    FAMILIES.forEach((family, index) => {
      PRISM_PORTS[family] = started[index]!.port;
      prisms.set(family, started[index]!.child);
    });
  });

  afterAll(async () => {
    await Promise.all([...prisms.values()].map(stopChild));
  });

  it.each(FAMILIES)('%s: no failure; every non-2xx response passes or is skipped with a reason', async (family) => {
    const report = await runContract({ family, server: `http://127.0.0.1:${PRISM_PORTS[family]}`, mock: true });
    const document = bundled(family);
    expect(report.failures).toEqual([]);
    expect(report.failed).toBe(0);
    expect(report.total).toBe(documentedResponses(document));
    expect(report.run).toBeGreaterThan(operations(document).length);
    expect(report.passed + report.failed + report.skipped).toBe(report.total);
    for (const result of report.results) {
      if (statusOf(result.name) >= 300) {
        expect(['pass', 'skip'], result.name).toContain(result.status);
      }
    }
    for (const skip of report.skips) {
      expect(skip.reason, skip.name).toMatch(/\S/);
      expect(skip.reason, skip.name).not.toMatch(/without a recorded reason/);
    }
  });

  it('--names lists the transactions without sending anything', async () => {
    const report = await runContract({ family: 'sdk', server: 'http://127.0.0.1:9', names: true });
    expect(report.names).toHaveLength(documentedResponses(bundled('sdk')));
    expect(report.names[0]).toMatch(/^\/merchant\/credit\/initiateTransaction > .* > 201 > application\/json$/);
  });
});

describe('contract kit reports a server that breaks the contract', { timeout: KIT_TIMEOUT_MS }, () => {
  let fake: { server: Server; url: string } | undefined;
  const document = bundled('sdk');

  /** The first example of a documented response. */
  function example(path: string, status: number): unknown {
    const operation = (deref(document, (document.paths as Json)[path]) as Json).post as Json;
    const response = deref(document, (operation.responses as Json)[String(status)]);
    const media = (response.content as Json)['application/json'] as Json;
    const first = Object.values(media.examples as Json)[0];
    return deref(document, first).value;
  }

  beforeAll(async () => {
    // Answers the documented example of the status asked for with `Prefer: code=NNN`, except:
    // the initiate 201 answers a number where the schema says string; the refund 200 answers
    // the right body as text/plain; the status check 200 carries a proxy's violation header.
    fake = await listen((request, _body, response) => {
      const status = Number(/code=(\d{3})/.exec(String(request.headers.prefer))?.[1] ?? 200);
      const path = String(request.url);
      if (path === '/merchant/credit/initiateTransaction' && status === 201) return sendJson(response, 201, { message: 42 });
      if (path === '/merchant/credit/refundTransaction' && status === 200) return sendJson(response, 200, { message: 'ok' }, 'text/plain');
      if (path === '/merchant/credit/checkTransactionStatus' && status === 200) {
        // What `prism proxy --errors` adds when the server behind it breaks the contract.
        response.setHeader('sl-violations', '[{"location":["response","body"],"severity":"Error","message":"example violation"}]');
      }
      return sendJson(response, status, example(path, status));
    });
  });

  afterAll(async () => {
    await close(fake?.server);
  });

  it('a wrong body type, a wrong Content-Type and a proxy violation are failures; the rest passes', async () => {
    const report = await runContract({ family: 'sdk', server: fake!.url, mock: true });
    const failure = (prefix: string) => report.failures.find((candidate) => candidate.name.startsWith(prefix));
    expect(report.failures.map((candidate) => candidate.name).sort()).toEqual([
      '/merchant/credit/checkTransactionStatus > Check the status of an SDK-flow transaction > 200 > application/json',
      '/merchant/credit/initiateTransaction > Initiate an SDK-flow transaction > 201 > application/json',
      '/merchant/credit/refundTransaction > Refund an SDK-flow transaction > 200 > application/json',
    ]);
    expect(failure('/merchant/credit/initiateTransaction')!.message).toMatch(/\/message must be string/);
    expect(failure('/merchant/credit/refundTransaction')!.message).toMatch(/Content-Type is text\/plain, expected application\/json/);
    expect(failure('/merchant/credit/checkTransactionStatus')!.message).toMatch(/the proxy reports contract violations: .*example violation/);
    expect(report.passed).toBe(report.total - 3);
  });

  it('the command exits 1 and prints the failure', async () => {
    const { code, stdout } = await runCli(['--family', 'sdk', '--server', fake!.url, '--mock']);
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAIL {2}\/merchant\/credit\/initiateTransaction/);
    expect(stdout).toMatch(/Transactions: 18 total, 18 run, 15 passed, 3 failed, 0 skipped/);
  });

  it('the command refuses a private key on the command line', async () => {
    const { code, stderr } = await runCli(['--family', 'sdk', '--server', fake!.url, '--private-key', 'secret']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/never taken on the command line/);
  });
});

describe('contract kit against a stateful SDK-flow server', { timeout: KIT_TIMEOUT_MS }, () => {
  const PARTNER = 'partner_test';
  const KEY = 'test_private_key';

  /** A minimal SDK-flow server that keeps transactions in memory, with or without the sandbox's confirm control. */
  async function sdkServer(confirmControl: boolean, checkSignature = true) {
    const transactions = new Map<string, { status: string; amount: number; refunded: number }>();
    return listen((request, body, response) => {
      if (body.length > 1024 * 1024) return sendJson(response, 413, { message: 'PAYLOAD_TOO_LARGE' });
      const signed = verifySdkSignature(request.headers['x-signature'], body, KEY) || !checkSignature;
      if (request.headers['x-partnerid'] !== PARTNER || !signed) {
        return sendJson(response, 401, { message: 'AUTHORIZATION_FAILED' });
      }
      const confirm = /^\/sandbox\/sdk\/transactions\/([^/]+)\/confirm$/.exec(String(request.url));
      if (confirm) {
        const transaction = confirmControl ? transactions.get(decodeURIComponent(confirm[1]!)) : undefined;
        if (!transaction) return sendJson(response, 404, { message: 'NOT_FOUND' });
        transaction.status = 'SUCCESS';
        return sendJson(response, 200, { message: 'SUCCESS' });
      }
      let input: { merchantTransactionId?: string; amount?: number; userPhoneNumber?: string };
      try {
        input = JSON.parse(body.toString('utf8')) as typeof input;
      } catch {
        return sendJson(response, 400, { message: 'BAD_REQUEST' });
      }
      const id = String(input.merchantTransactionId);
      const transaction = transactions.get(id);
      switch (request.url) {
        case '/merchant/credit/initiateTransaction':
          if (transaction) return sendJson(response, 400, { message: 'DUPLICATE_TRANSACTION_ID' });
          transactions.set(id, { status: 'PENDING', amount: Number(input.amount), refunded: 0 });
          return sendJson(response, 201, { message: 'TRANSACTION_INITIATED' });
        case '/merchant/credit/checkTransactionStatus':
          if (!transaction) return sendJson(response, 400, { message: 'NO_SUCH_TRANSACTION' });
          return sendJson(response, 200, { message: transaction.status });
        case '/merchant/credit/refundTransaction': {
          if (!transaction) return sendJson(response, 400, { message: 'NO_SUCH_TRANSACTION' });
          if (transaction.status !== 'SUCCESS') return sendJson(response, 400, { message: 'TRANSACTION_NOT_REFUNDABLE' });
          const amount = input.amount || transaction.amount - transaction.refunded;
          if (transaction.refunded >= transaction.amount) return sendJson(response, 400, { message: 'ALREADY_REFUNDED' });
          if (amount > transaction.amount - transaction.refunded) return sendJson(response, 400, { message: 'REFUND_AMOUNT_TOO_LARGE' });
          transaction.refunded += amount;
          return sendJson(response, 200, { message: 'ok' });
        }
        default:
          return sendJson(response, 404, { message: 'NOT_FOUND' });
      }
    });
  }

  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map(close));
  });

  /** The only skips against a server that does everything: 500 and 429, which no request is sure to cause. */
  function onlyServiceFailuresSkipped(report: ContractReport): void {
    for (const skip of report.skips) {
      expect(skip.reason).toMatch(
        /^(500 INTERNAL_SERVER_ERROR: no request can cause a service failure|429: the contract promises no rate limit \(D24\), so no request is sure to cause it)$/,
      );
    }
  }

  it('drives every code but 500 with real requests, and can run again on the same server', async () => {
    const { server, url } = await sdkServer(true);
    servers.push(server);
    for (let round = 0; round < 2; round += 1) {
      const report = await runContract({ family: 'sdk', server: url, partnerId: PARTNER, privateKey: KEY });
      expect(report.failures).toEqual([]);
      expect(report.skipped).toBe(6);
      expect(report.passed).toBe(12);
      onlyServiceFailuresSkipped(report);
    }
  });

  it('skips the refund 200, with the reason, when the server has no confirm control', async () => {
    const { server, url } = await sdkServer(false);
    servers.push(server);
    const report = await runContract({ family: 'sdk', server: url, partnerId: PARTNER, privateKey: KEY });
    expect(report.failures).toEqual([]);
    const refund = report.skips.find((skip) => skip.name.startsWith('/merchant/credit/refundTransaction') && / > 200 > /.test(skip.name));
    expect(refund?.reason).toMatch(/needs a transaction confirmed by a user/);
    expect(report.skipped).toBe(7);
  });

  it('behind a validating proxy (--proxy), skips the requests that break the contract on purpose', async () => {
    const { server, url } = await sdkServer(true);
    servers.push(server);
    const report = await runContract({ family: 'sdk', server: url, partnerId: PARTNER, privateKey: KEY, proxy: true, controls: url });
    expect(report.failures).toEqual([]);
    expect(report.skips.filter((skip) => statusOf(skip.name) === 413)).toHaveLength(3);
    for (const skip of report.skips.filter((candidate) => statusOf(candidate.name) === 413)) {
      expect(skip.reason).toMatch(/validating proxy in front of the server \(--proxy\)/);
    }
    expect(report.passed).toBe(9);
  });

  it('reports a server that accepts a wrong signature', async () => {
    const { server, url } = await sdkServer(true, false);
    servers.push(server);
    const report = await runContract({ family: 'sdk', server: url, partnerId: PARTNER, privateKey: KEY });
    expect(report.failures.map((failure) => statusOf(failure.name))).toEqual([401, 401, 401]);
    for (const failure of report.failures) expect(failure.message).toMatch(/^status (200|201|400), expected 401/);
  });

  it('reports an unreachable server as failures, not as a crash of the kit', async () => {
    const report = await runContract({ family: 'sdk', server: 'http://127.0.0.1:1', partnerId: PARTNER, privateKey: KEY });
    expect(report.failed).toBe(report.run);
    expect(report.failed).toBeGreaterThan(0);
    expect(report.setupNotes.join(' ')).toMatch(/setup failed|initiating/);
  });

  it('needs the partner id and the private key against a real server', async () => {
    await expect(runContract({ family: 'sdk', server: 'http://127.0.0.1:1' })).rejects.toThrow(/needs --partner-id/);
  });
});

describe("the hook file's signatures", () => {
  // Dredd sends a string body as UTF-8, so the vectors whose body is text apply. The kit signs
  // with src/signature.ts itself; these check that it signs the exact body and path Dredd sends.
  const settings = { partnerId: 'partner_vectors' } as Settings;
  const transactionOf = (body: string, fullPath: string): DreddTransaction => ({
    name: 'vector',
    fullPath,
    request: { method: 'POST', uri: fullPath, headers: {}, body },
    expected: { statusCode: 200, headers: {} },
  });
  const textVectors = vectors.flatMap((vector) =>
    vector.kind !== 'status' && 'utf8' in vector.body ? [[vector.name, vector, vector.body.utf8] as const] : [],
  );

  it.each(textVectors)('%s', (_name, vector, text) => {
    const transaction = transactionOf(text, vector.kind === 'web' ? vector.pathAndQuery : '/unused');
    const withKey = { ...settings, privateKey: vector.key };
    if (vector.kind === 'web') setWebSignature(transaction, withKey, 'valid');
    else setSdkSignature(transaction, withKey, 'valid');
    expect(transaction.request.headers['X-Signature']).toBe(vector.signature);
    expect(transaction.request.headers[vector.kind === 'web' ? 'X-Partner-Id' : 'X-Partnerid']).toBe('partner_vectors');
    // A wrong key keeps the form of a signature and is refused.
    if (vector.kind === 'web') setWebSignature(transaction, withKey, 'wrong');
    else setSdkSignature(transaction, withKey, 'wrong');
    const wrong = transaction.request.headers['X-Signature'];
    expect(wrong).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(wrong).not.toBe(vector.signature);
    expect(Object.keys(transaction.request.headers).filter((name) => name.toLowerCase() === 'x-signature')).toHaveLength(1);
  });

  it('has text vectors of both flows', () => {
    expect(textVectors.filter(([, vector]) => vector.kind === 'web').length).toBeGreaterThan(0);
    expect(textVectors.filter(([, vector]) => vector.kind === 'sdk').length).toBeGreaterThan(0);
  });
});

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.PAYLATER_PRIVATE_KEY;
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/contract.ts', ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}
