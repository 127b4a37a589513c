/**
 * `paylater listen` and `paylater trigger` end to end: a sandbox in this process on a free port
 * (no webhook URL, so every event is recorded not_sent), a receiver on a free port, `paylater listen`
 * as a child process forwarding to it, and `paylater trigger` run for every event. The receiver must
 * get each event with a body and X-Signature that the package's own verify functions accept, and
 * listen must print one line per event with the receiver's answer.
 *
 * `listen` always runs as a process (its start, its signals and its exit are under test). A trigger
 * runs as a process where its command line, environment or exit code is what is checked; elsewhere
 * it is the command's own flow (`trigger()` of src/cli/trigger.ts, what the command runs after
 * reading its options) called in this process, printing into a string: the same requests and the
 * same lines, without starting Node again for each of the 16 events.
 */
import { shownWebhookUrl } from '../../src/sandbox/shown-url.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMerchantApiClient } from '../../src/clients/gateway.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Logger } from '../../src/sandbox/router.js';
import { createWebhookHandler, verifyGatewayWebhook, verifySdkWebhook, verifyWebWebhook } from '../../src/webhooks/index.js';
import { PRIVATE_KEY, startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from '../support/sandbox.js';
import { CLI_ENTRY } from '../support/cli.js';
import { startShopReceiver } from '../support/shop-receiver.js';
import { DEFAULT_MERCHANT_ID } from '../../src/cli/trigger-command.js';
import { trigger } from '../../src/cli/trigger.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const QUIET: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Published sandbox test secrets: they must never be printed by listen or trigger. */
const SECRETS = [PRIVATE_KEY, 'pg_test_secret'];

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `paylater ...args` (the sources, transpiled once per run: test/support/cli.ts), with only PATH in its environment besides `env`. */
function paylater(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.stdin.end();
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * `paylater trigger <event> --sandbox <sandbox>` run in this process by the command's own flow,
 * with what it prints; the environment's PAYLATER_ variables are blanked for the file (below), as
 * the processes get none.
 */
async function triggered(event: string, sandbox: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  const settings = { sandbox, partnerId: undefined, keyFile: undefined, merchant: DEFAULT_MERCHANT_ID, merchantApiUsername: undefined, webhookUrl: undefined };
  const code = await trigger(event, settings, { command: `paylater trigger ${event}`, out: (line) => void (stdout += `${line}\n`) });
  return { code, stdout, stderr: '' };
}

async function finished(run: Run): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

function expectNoSecret(text: string, secrets: string[] = SECRETS): void {
  for (const secret of secrets) expect(text.includes(secret), 'a secret was printed').toBe(false);
}

/** Ctrl+C: SIGINT, then the exit code. */
async function interrupt(run: Run): Promise<number | null> {
  run.child.kill('SIGINT');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 10_000);
  const code = await run.exited;
  clearTimeout(timer);
  return code;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What each event must make the receiver get. */
const EVENTS = [
  { name: 'sdk.success', family: 'sdk', webhooks: [['transactionStatus', 'SUCCESS']] },
  { name: 'sdk.failure', family: 'sdk', webhooks: [['transactionStatus', 'FAILURE']] },
  { name: 'sdk.cancelled', family: 'sdk', webhooks: [['transactionStatus', 'CANCELLED']] },
  { name: 'web.success', family: 'web', webhooks: [['transactionStatus', 'SUCCESS']] },
  { name: 'web.failure', family: 'web', webhooks: [['transactionStatus', 'FAILURE']] },
  { name: 'web.cancelled', family: 'web', webhooks: [['transactionStatus', 'CANCELLED']] },
  { name: 'gateway.transaction.success', family: 'gateway', webhooks: [['transactionUpdated', 'SUCCESS']] },
  { name: 'gateway.transaction.failure', family: 'gateway', webhooks: [['transactionUpdated', 'FAILED']] },
  { name: 'gateway.transaction.cancelled', family: 'gateway', webhooks: [['transactionUpdated', 'CANCELLED']] },
  { name: 'gateway.refund', family: 'gateway', webhooks: [['transactionUpdated', 'SUCCESS'], ['refundUpdated', 'SUCCESS']] },
] as const;

describe('paylater listen and trigger', () => {
  let t: TestSandbox;
  let receiver: Receiver;
  beforeAll(async () => {
    for (const name of Object.keys(process.env).filter((key) => key.startsWith('PAYLATER_'))) vi.stubEnv(name, '');
    t = await startSandbox();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await t?.close();
    await receiver?.close();
  });

  it('forwards every triggered event, signed as the contract says, and prints one line per event', async () => {
    const listen = paylater(['listen', '--forward-to', receiver.url, '--sandbox', t.url]);
    try {
      await waitFor(() => (listen.stderr().includes('  gateway ') ? true : undefined), 30_000);
      // A receiver that does not name its family gets every family; then the key of each.
      expect(listen.stderr()).toBe(
        `Ready: forwarding the sdk, web and gateway webhooks (the receiver did not name the family it verifies; choose with --family) of the sandbox at ${t.url} to ${shownWebhookUrl(new URL(receiver.url).href)}. Press Ctrl+C to stop.\n` +
          'Signing keys, the secret your receiver verifies each family with:\n' +
          `  sdk, web  ${PRIVATE_KEY}  (the sandbox's published test private key; set your own with PAYLATER_PRIVATE_KEY)\n` +
          "  gateway   merchant paylater_trigger's Transactional API password, once it exists: 'paylater trigger gateway.transaction.success' onboards it; run listen again to see the password\n",
      );
      // listen asked the receiver its family once, with an unsigned {} (no event id): not an event.
      const asked = receiver.received.filter((request) => request.headers['x-event-id'] === undefined);
      expect(asked.map((request) => [request.body, request.headers['x-signature']])).toEqual([['{}', undefined]]);
      receiver.received.splice(receiver.received.indexOf(asked[0]!), 1);

      // The web and SDK events at once; the gateway ones in turn (they share one merchant).
      const direct = await Promise.all(
        EVENTS.filter((event) => event.family !== 'gateway').map(async (event) => ({ event, result: await triggered(event.name, t.url) })),
      );
      const gateway = [];
      for (const event of EVENTS.filter((item) => item.family === 'gateway')) {
        gateway.push({ event, result: await triggered(event.name, t.url) });
      }

      const expected = new Map<string, { family: string; webhook: string; status: string; transactionId: string }>();
      for (const { event, result } of [...direct, ...gateway]) {
        expect(result.code, `${event.name}: ${result.stderr}`).toBe(0);
        expect(result.stderr).toBe('');
        expectNoSecret(result.stdout);
        const lines = result.stdout.trim().split('\n');
        expect(lines[0]).toBe(`Triggered ${event.name} on the sandbox at ${t.url}`);
        const transactionId = /transaction (trg_\w+)/.exec(result.stdout)?.[1];
        expect(transactionId, result.stdout).toBeDefined();
        const printed = [...result.stdout.matchAll(/^ {2}event (evt_\w+) {2}(\w+) (\w+) {2}\(not_sent: /gm)];
        expect(printed.map((match) => match[3])).toEqual(event.webhooks.map(([webhook]) => webhook));
        printed.forEach((match, index) => {
          const [webhook, status] = event.webhooks[index]!;
          expect(match[2]).toBe(event.family);
          expected.set(match[1]!, { family: event.family, webhook, status, transactionId: transactionId! });
        });
      }
      expect(expected.size).toBe(11);

      // The receiver got each event once, and each verifies with the package's own functions.
      await waitFor(() => (receiver.received.length >= expected.size ? true : undefined), 30_000);
      const merchantApi = createMerchantApiClient({ baseUrl: t.url, credentials: { username: 'pg_test', password: 'pg_test_secret' } });
      const merchant = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: 'paylater_trigger' } } });
      const password = merchant.data?.merchant.basicAuthDetails?.password;
      expect(password).toEqual(expect.any(String));
      const seen = new Set<string>();
      for (const request of receiver.received) {
        const eventId = request.headers['x-event-id'] as string;
        const want = expected.get(eventId);
        expect(want, `an event nobody triggered: ${eventId}`).toBeDefined();
        expect(seen.has(eventId)).toBe(false);
        seen.add(eventId);
        expect(request.headers['content-type']).toBe('application/json');
        if (want!.family === 'sdk') {
          const event = verifySdkWebhook(request.body, request.headers, PRIVATE_KEY);
          expect(event).toEqual({ name: 'transactionStatus', eventId, payload: { merchantTransactionId: want!.transactionId, status: want!.status } });
        } else if (want!.family === 'web') {
          const event = verifyWebWebhook(request.body, request.headers, PRIVATE_KEY);
          expect(event.payload).toMatchObject({ transactionId: want!.transactionId, status: want!.status });
        } else {
          const event = verifyGatewayWebhook(request.body, request.headers, password!);
          expect(event.eventId).toBe(eventId);
          expect(event.name).toBe(want!.webhook);
          if (event.kind === 'transaction') {
            expect(want!.webhook).toBe('transactionUpdated');
            expect(event.payload.transaction).toMatchObject({ id: want!.transactionId, status: want!.status });
          } else {
            expect(want!.webhook).toBe('refundUpdated');
            expect(event.payload.refund).toMatchObject({ transactionId: want!.transactionId, status: want!.status });
          }
        }
        // Byte for byte what the sandbox recorded and signed.
        const [recorded] = (await t.deliveries(want!.transactionId)).filter((delivery) => delivery.eventId === eventId);
        expect(request.body).toBe(recorded.body);
        expect(request.headers['x-signature']).toBe(recorded.headers['X-Signature']);
      }
      expect(seen.size).toBe(expected.size);

      // One line per event: time, family, event, its status, transaction, event id, the receiver's answer.
      await waitFor(() => (listen.stdout().trim().split('\n').length >= expected.size ? true : undefined));
      const lines = listen.stdout().trim().split('\n');
      expect(lines).toHaveLength(expected.size);
      for (const [eventId, want] of expected) {
        const line = lines.find((candidate) => candidate.includes(eventId));
        expect(line, eventId).toMatch(
          new RegExp(`^\\d\\d:\\d\\d:\\d\\d {2}${want.family} +${want.webhook} +${want.status} +${want.transactionId} {2}${eventId} {2}-> 200 OK in \\d+ ms$`),
        );
      }

      expect(await interrupt(listen)).toBe(0);
      expect(listen.stderr().trim().split('\n').at(-1)).toBe('Stopped.');
      expectNoSecret(listen.stdout() + listen.stderr(), ['pg_test_secret', password!]);
    } finally {
      listen.child.kill('SIGKILL');
    }
  }, 240_000);

  it("forwards the family a package handler names, and prints the gateway merchant's password with --family gateway", async () => {
    const events: string[] = [];
    const handler = createWebhookHandler({ family: 'web', secret: PRIVATE_KEY, onEvent: ({ payload }) => void events.push(payload.status) });
    const server = createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/paylater/webhook`;
    const listen = paylater(['listen', '--forward-to', hook, '--sandbox', t.url]);
    let gatewayOnly: Run | undefined;
    try {
      await waitFor(() => (listen.stderr().includes('  web ') ? true : undefined), 30_000);
      expect(listen.stderr().split('\n').slice(0, 3)).toEqual([
        `Ready: forwarding the web webhooks (the family the receiver verifies, named by its Paylater-Webhook-Family header; --family chooses others) of the sandbox at ${t.url} to ${shownWebhookUrl(hook)}. Press Ctrl+C to stop.`,
        'Signing keys, the secret your receiver verifies each family with:',
        `  web       ${PRIVATE_KEY}  (the sandbox's published test private key; set your own with PAYLATER_PRIVATE_KEY)`,
      ]);
      for (const event of ['sdk.success', 'web.cancelled']) expect((await triggered(event, t.url)).code).toBe(0);
      await waitFor(() => (events.length > 0 ? true : undefined), 20_000);
      expect(events).toEqual(['CANCELLED']);
      // listen prints its line once the receiver's answer is back, after the handler ran.
      await waitFor(() => (listen.stdout().includes('\n') ? true : undefined), 20_000);
      expect(listen.stdout().trim().split('\n')).toEqual([expect.stringMatching(/ web +transactionStatus +CANCELLED .* -> 200 OK in \d+ ms$/)]);

      // Once trigger has onboarded its merchant, that merchant's password is the gateway key.
      expect((await triggered('gateway.transaction.cancelled', t.url)).code).toBe(0);
      gatewayOnly = paylater(['listen', '--forward-to', `http://127.0.0.1:${await closedPort()}/hook`, '--sandbox', t.url, '--family', 'gateway']);
      await waitFor(() => (gatewayOnly!.stderr().includes('  gateway ') ? true : undefined), 30_000);
      const merchantApi = createMerchantApiClient({ baseUrl: t.url, credentials: { username: 'pg_test', password: 'pg_test_secret' } });
      const merchant = await merchantApi.GET('/api/merchant/{id}', { params: { path: { id: 'paylater_trigger' } } });
      const password = merchant.data?.merchant.basicAuthDetails?.password;
      expect(gatewayOnly.stderr()).toContain(`  gateway   ${password!}  (merchant paylater_trigger's Transactional API password, issued by the sandbox; other merchants sign with their own)\n`);
      expect(gatewayOnly.stderr()).not.toContain(PRIVATE_KEY);
      expectNoSecret(listen.stdout() + listen.stderr() + gatewayOnly.stdout() + gatewayOnly.stderr(), ['pg_test_secret']);
      expect(await interrupt(listen)).toBe(0);
      expect(await interrupt(gatewayOnly)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
      gatewayOnly?.child.kill('SIGKILL');
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 120_000);

  it('names a key set in PAYLATER_PRIVATE_KEY without printing it', async () => {
    const own = 'my-own-partner-key-5c1e';
    const listen = paylater(['listen', '--forward-to', receiver.url, '--sandbox', t.url, '--family', 'sdk'], { PAYLATER_PRIVATE_KEY: own });
    try {
      await waitFor(() => (listen.stderr().includes('  sdk ') ? true : undefined), 30_000);
      expect(listen.stderr()).toContain("  sdk       the partner's private key in PAYLATER_PRIVATE_KEY (your own key: not printed)\n");
      expectNoSecret(listen.stderr(), [own]);
      expect(await interrupt(listen)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
    }
  }, 60_000);

  it('prints the error when the receiver does not answer, and keeps only the families asked for', async () => {
    const port = await closedPort();
    const listen = paylater(['listen', '--forward-to', `http://127.0.0.1:${port}/hook`, '--sandbox', t.url, '--family', 'web']);
    try {
      await waitFor(() => (listen.stderr().includes('Ready: ') ? true : undefined), 30_000);
      expect(listen.stderr()).toMatch(/^Ready: forwarding the web webhooks of the sandbox/);
      const sdk = await triggered('sdk.success', t.url);
      const web = await triggered('web.cancelled', t.url);
      expect([sdk.code, web.code]).toEqual([0, 0]);
      const webEvent = /event (evt_\w+)/.exec(web.stdout)?.[1];
      await waitFor(() => (listen.stdout().includes(webEvent!) ? true : undefined), 20_000);
      const lines = listen.stdout().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`  web +transactionStatus +CANCELLED +trg_web_\\w+  ${webEvent}  -> failed after \\d+ ms: connection refused \\(ECONNREFUSED\\)$`));
      expect(await interrupt(listen)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
    }
  }, 120_000);

  it('reconnects when the sandbox comes back, and stops with a clear message when there is none', async () => {
    const other = await startSandbox();
    const port = new URL(other.url).port;
    const listen = paylater(['listen', '--forward-to', receiver.url, '--sandbox', other.url]);
    let again: Sandbox | undefined;
    try {
      await waitFor(() => (listen.stderr().includes('Ready: ') ? true : undefined), 30_000);
      await other.close();
      await waitFor(() => (listen.stderr().includes('Lost the connection') ? true : undefined), 10_000);
      expect(listen.stderr()).toContain('Lost the connection to the sandbox (the sandbox is stopping); reconnecting...');

      again = await createSandbox({ logger: QUIET });
      expect(await again.listen(Number(port), '127.0.0.1')).toBe(other.url);
      await waitFor(() => (listen.stderr().includes('Reconnected') ? true : undefined), 20_000);
      const result = await triggered('sdk.cancelled', again.url);
      const eventId = /event (evt_\w+)/.exec(result.stdout)?.[1];
      await waitFor(() => (listen.stdout().includes(`${eventId}  -> 200 OK`) ? true : undefined), 20_000);
      expect(await interrupt(listen)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
      await again?.close();
    }

    const nowhere = `http://127.0.0.1:${await closedPort()}`;
    const [lost, trigger] = await Promise.all([
      finished(paylater(['listen', '--forward-to', receiver.url, '--sandbox', nowhere])),
      finished(paylater(['trigger', 'gateway.refund', '--sandbox', nowhere])),
    ]);
    expect(lost.code).toBe(1);
    expect(lost.stdout).toBe('');
    expect(lost.stderr).toBe(
      `paylater: cannot follow the webhooks of the sandbox at ${nowhere}: connection refused (ECONNREFUSED); is it running? Start it with 'paylater sandbox', or give its URL with --sandbox\n`,
    );
    expect(trigger.code).toBe(1);
    expect(trigger.stderr).toMatch(/^paylater: gateway\.refund: cannot read the merchant paylater_trigger: the sandbox at .* did not answer \(ECONNREFUSED\); is it running\?/);
  }, 180_000);

  it('web events with --webhook-url call notes.webhook_url as the WooCommerce plugin reads it (D73); listen forwards the JSON webhook only', async () => {
    const shop = await startShopReceiver((_request, origin) => ({ status: 302, headers: { Location: `${origin}/checkout/order-received/` }, body: '' }));
    // The web checkout guide's JSON receiver, which names its family: listen forwards it the
    // transactionStatus webhook, and not the form post the sandbox sends to notes.webhook_url itself.
    const statuses: string[] = [];
    const handler = createWebhookHandler({ family: 'web', secret: PRIVATE_KEY, onEvent: ({ payload }) => void statuses.push(payload.status) });
    const json = createHttpServer(handler);
    await new Promise<void>((resolve) => json.listen(0, '127.0.0.1', resolve));
    const listen = paylater(['listen', '--forward-to', `http://127.0.0.1:${(json.address() as { port: number }).port}/paylater/webhook`, '--sandbox', t.url]);
    try {
      await waitFor(() => (listen.stderr().includes('Ready: forwarding the web webhooks') ? true : undefined), 30_000);
      const hook = `${shop.origin}/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=wc_order_T1`;
      const result = await finished(paylater(['trigger', 'web.success', '--sandbox', t.url, '--webhook-url', hook]));
      expect(result.code, result.stderr).toBe(0);
      const id = /web transaction (trg_web_\w+)/.exec(result.stdout)?.[1];
      expect(id, result.stdout).toBeDefined();
      await waitFor(() => (shop.received.length > 0 ? true : undefined), 30_000);
      const call = shop.received[0]!;
      expect(call.method).toBe('POST');
      expect(call.url).toBe(`/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=wc_order_T1&txnId=${id}&txnStatus=SUCCESS`);
      expect(result.stdout).toMatch(/web transactionResult {2}\(\w+: sent to notes\.webhook_url with txnId and txnStatus\)/);
      expectNoSecret(result.stdout + result.stderr);

      await waitFor(() => (listen.stdout().trim().split('\n').length >= 2 ? true : undefined), 20_000);
      const lines = listen.stdout().trim().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(` web +transactionStatus +SUCCESS +${id}  evt_\\w+  -> 200 OK in \\d+ ms$`)),
        expect.stringMatching(new RegExp(` web +transactionResult +SUCCESS +${id}  evt_\\w+  -> not forwarded: the call to the initiate's notes\\.webhook_url \\(a form post, not a webhook\\), sent there by the sandbox itself$`)),
      ]);
      expect(statuses).toEqual(['SUCCESS']);
      // The sandbox's own call to notes.webhook_url is not a double delivery to the receiver.
      expect(listen.stderr()).not.toContain('warning:');
      expect(await interrupt(listen)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
      await shop.close();
      await new Promise<void>((resolve) => json.close(() => resolve()));
    }
  }, 120_000);

  it('reports wrong credentials without printing them', async () => {
    const wrongKey = 'not-the-sandbox-key-91f2';
    const wrongPassword = 'not-the-merchant-api-password-3c7a';
    const [sdk, gateway] = await Promise.all([
      finished(paylater(['trigger', 'sdk.success', '--sandbox', t.url], { PAYLATER_PRIVATE_KEY: wrongKey })),
      finished(paylater(['trigger', 'gateway.transaction.success', '--sandbox', t.url, '--merchant', 'other_merchant'], { PAYLATER_MERCHANT_API_PASSWORD: wrongPassword })),
    ]);
    expect(sdk.code).toBe(1);
    expect(sdk.stderr).toMatch(
      /^paylater: cannot initiate the SDK transaction: the sandbox answered HTTP 401 AUTHORIZATION_FAILED.*; is PAYLATER_PRIVATE_KEY \(or --key-file\) the sandbox's private key, and --partner-id its partner id\?\n$/,
    );
    expect(gateway.code).toBe(1);
    expect(gateway.stderr).toMatch(/^paylater: cannot read the merchant other_merchant: the sandbox answered HTTP 401 AUTHORIZATION_FAILED/);
    expect(gateway.stderr).toMatch(/are PAYLATER_MERCHANT_API_USERNAME and PAYLATER_MERCHANT_API_PASSWORD the sandbox's Merchant API credentials\?\n$/);
    expectNoSecret(sdk.stdout + sdk.stderr + gateway.stdout + gateway.stderr, [wrongKey, wrongPassword]);
  }, 120_000);

  it('warns once when the sandbox also delivers a family itself, and reads the deprecated PAYLATER_SANDBOX_URL with a line saying so', async () => {
    const delivering = await startSandbox({ config: { partner: { webhookUrls: { sdk: receiver.url } } } });
    const listen = paylater(['listen', '--forward-to', receiver.url, '--family', 'sdk'], { PAYLATER_SANDBOX_URL: delivering.url });
    try {
      await waitFor(() => (listen.stderr().includes('Ready: ') ? true : undefined), 30_000);
      expect(listen.stderr()).toMatch(/^paylater: PAYLATER_SANDBOX_URL is deprecated and will be removed: set PAYLATER_BASE_URL instead \(the same value\)\.\n/);
      for (const event of ['sdk.success', 'sdk.cancelled']) {
        expect((await finished(paylater(['trigger', event], { PAYLATER_BASE_URL: delivering.url }))).code).toBe(0);
      }
      await waitFor(() => (listen.stdout().trim().split('\n').length >= 2 ? true : undefined), 20_000);
      const warnings = listen.stderr().split('\n').filter((line) => line.startsWith('warning: the sandbox also delivers sdk events itself'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('--sdk-webhook-url or --webhook-url');
      expect(listen.stdout()).toMatch(/ sdk +transactionStatus +SUCCESS +trg_sdk_/);
      expect(listen.stdout()).toMatch(/ sdk +transactionStatus +CANCELLED +trg_sdk_/);
      expect(await interrupt(listen)).toBe(0);
    } finally {
      listen.child.kill('SIGKILL');
      await delivering.close();
    }
  }, 120_000);
});
