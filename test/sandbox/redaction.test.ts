/**
 * Secrets a user sends are not shown back: a webhook URL's path and query (where a receiver's token
 * goes) appear nowhere as sent — the deliveries list and the refusal and abandon log lines show its
 * origin and fingerprint — and a 401 names the partner id header that is wrong, not its value.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryDispatcher } from '../../src/sandbox/delivery/index.js';
import { shownWebhookUrl, urlFingerprint } from '../../src/sandbox/shown-url.js';
import { startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from '../support/sandbox.js';

const fingerprint = (url: string) => createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 8);

let t: TestSandbox | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await t?.close();
  await receiver?.close();
  t = undefined;
  receiver = undefined;
});

describe('shownWebhookUrl', () => {
  it('shows the scheme, host and port and the first 8 hex digits of the SHA-256 of the URL as given', () => {
    const url = 'https://hooks.example.in:8443/paylater/tok_abc123?key=k_456';
    expect(urlFingerprint(url)).toBe(fingerprint(url));
    expect(shownWebhookUrl(url)).toBe(`https://hooks.example.in:8443/... (sha256:${fingerprint(url)})`);
    expect(shownWebhookUrl('http://u:p4ss@127.0.0.1/x')).toBe(`http://127.0.0.1/... (sha256:${fingerprint('http://u:p4ss@127.0.0.1/x')})`);
    expect(shownWebhookUrl(null)).toBe('(none)');
    expect(shownWebhookUrl('not a url /tok')).toMatch(/^\(invalid URL\) \(sha256:[0-9a-f]{8}\)$/);
  });
});

describe('GET /sandbox/webhooks/deliveries', () => {
  it('answers the URL of a delivery as its origin and fingerprint, never its path or query', async () => {
    receiver = await startReceiver(() => 200);
    const url = `${receiver.url}/tok_path_7f3a?token=tok_query_91b2`;
    t = await startSandbox();
    const { sandbox } = t;
    await sandbox.store.unit(() => {
      sandbox.deliveries.enqueue({ url, body: '{}', orderingKey: 'k', successStatus: '2xx', family: 'sdk', event: 'transactionStatus', transactionId: 'red_1' });
      sandbox.deliveries.enqueue({ url: null, body: '{}', orderingKey: 'k0', successStatus: '2xx', family: 'sdk', event: 'transactionStatus', transactionId: 'red_0' });
    });
    const answer = await t.request('GET', '/sandbox/webhooks/deliveries');
    expect(answer.status).toBe(200);
    const origin = new URL(receiver.url).origin;
    expect(answer.body.deliveries.map((delivery: { url: string | null }) => delivery.url)).toEqual([
      `${origin}/... (sha256:${fingerprint(url)})`,
      null,
    ]);
    expect(answer.text).not.toContain('tok_path_7f3a');
    expect(answer.text).not.toContain('tok_query_91b2');
  });
});

describe('the log lines of webhooks', () => {
  const capture = () => {
    const lines: string[] = [];
    const log = (level: string, message: string) => void lines.push(`${level} ${message}`);
    return { lines, log };
  };

  it('a refused attempt names the receiver by origin and fingerprint', async () => {
    const { lines, log } = capture();
    const clock = new VirtualClock();
    const dispatcher = new DeliveryDispatcher({ clock, log });
    dispatcher.listeningAt({ address: '127.0.0.1', port: 4999 });
    const url = 'http://127.0.0.1:4999/tok_refused_55?k=q_66';
    dispatcher.enqueue({ url, body: '{}', orderingKey: 'k', successStatus: '2xx', family: 'sdk', event: 'transactionStatus' });
    await dispatcher.idle();
    await dispatcher.stop();
    clock.stop();
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^warn webhook evt_[0-9a-f]+ to http://127\\.0\\.0\\.1:4999/\\.\\.\\. \\(sha256:${fingerprint(url)}\\) refused: the URL points at the sandbox itself`)),
    ]);
    expect(lines.join('\n')).not.toMatch(/tok_refused_55|q_66/);
  });

  it('an abandoned delivery names the receiver by origin and fingerprint', async () => {
    const { lines, log } = capture();
    const clock = new VirtualClock();
    const dispatcher = new DeliveryDispatcher({ clock, log, fetch: async () => new Response('no', { status: 500 }) });
    const url = 'http://127.0.0.1:9/tok_abandoned_77?k=q_88';
    const delivery = dispatcher.enqueue({ url, body: '{}', orderingKey: 'k', successStatus: '2xx', family: 'sdk', event: 'transactionStatus' });
    for (let step = 0; step < 6; step++) {
      await dispatcher.idle();
      await clock.advance(7 * 60 * 60_000);
    }
    await waitFor(() => (dispatcher.get(delivery.id)?.status === 'abandoned' ? true : undefined));
    await dispatcher.stop();
    clock.stop();
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^warn webhook evt_[0-9a-f]+ to http://127\\.0\\.0\\.1:9/\\.\\.\\. \\(sha256:${fingerprint(url)}\\) abandoned after 6 attempts$`))]);
  });
});

describe('a 401 for the partner id', () => {
  it('says which header is wrong and never repeats what was sent in it', async () => {
    t = await startSandbox();
    for (const [path, header] of [
      ['/merchant/credit/checkTransactionStatus', 'X-Partnerid'],
      ['/api/transaction', 'X-Partner-Id'],
    ] as const) {
      const answer = await t.request('POST', path, {
        body: '{}',
        headers: { 'Content-Type': 'application/json', [header]: 'sk_live_pasted_KEY_0042' },
      });
      expect(answer.status).toBe(401);
      expect(answer.body.detail).toBe(`${header} is not a known partner id: send the partner id the sandbox prints on start (PAYLATER_PARTNER_ID).`);
      expect(answer.text).not.toContain('sk_live_pasted_KEY_0042');
    }
  });
});
