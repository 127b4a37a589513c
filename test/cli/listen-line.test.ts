/**
 * What `paylater listen` prints for one event: the event's status beside the event, and the
 * warning when the sandbox also delivers the event itself (a receiver forwarded to as well would
 * get it twice).
 */
import { describe, expect, it } from 'vitest';
import { doubleDeliveryWarning, eventLine, eventStatus, receiverReason, type StreamedEvent } from '../../src/cli/listen.js';

function event(family: string, name: string, body: unknown, status = 'not_sent'): StreamedEvent {
  return {
    id: '1',
    eventId: 'evt_0123',
    family,
    event: name,
    transactionId: 'ord_1',
    status,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
    createdAt: '2026-11-20T09:00:00.000Z',
  };
}

describe('listen event lines', () => {
  it('show the status of each family\'s webhook beside the event', () => {
    expect(eventStatus(event('sdk', 'transactionStatus', { merchantTransactionId: 'ord_1', status: 'SUCCESS' }))).toBe('SUCCESS');
    expect(eventStatus(event('web', 'transactionStatus', { transactionId: 'w', status: 'CANCELLED', signature: 's' }))).toBe('CANCELLED');
    expect(eventStatus(event('gateway', 'transactionUpdated', { transaction: { id: 't', status: 'FAILED' } }))).toBe('FAILED');
    expect(eventStatus(event('gateway', 'refundUpdated', { refund: { id: 'r', status: 'SUCCESS' } }))).toBe('SUCCESS');
    // The web flow's call to notes.webhook_url: a form, whose status is txnStatus.
    expect(eventStatus(event('web', 'transactionResult', 'key=wc_order_1&txnId=ord_1&txnStatus=FAILURE'))).toBe('FAILURE');
    expect(eventStatus(event('web', 'transactionResult', '{"status":"SUCCESS"}'))).toBeUndefined();
    const line = eventLine(event('sdk', 'transactionStatus', { merchantTransactionId: 'ord_1', status: 'FAILURE' }), '200 OK in 3 ms');
    expect(line).toMatch(/^\d\d:\d\d:\d\d {2}sdk {6}transactionStatus {3}FAILURE {4}ord_1 {2}evt_0123 {2}-> 200 OK in 3 ms$/);
  });

  it('show a dash for a body without a status, and never a control character', () => {
    expect(eventStatus(event('sdk', 'transactionStatus', 'not json'))).toBeUndefined();
    expect(eventStatus(event('sdk', 'transactionStatus', { status: 7 }))).toBeUndefined();
    expect(eventStatus(event('sdk', 'transactionStatus', { status: 'A\u001b[2JB' }))).toBe('A?[2JB');
    expect(eventLine(event('sdk', 'transactionStatus', 'null'), 'x')).toMatch(/transactionStatus {3}- {10}ord_1/);
  });

  it('warn when the sandbox delivers the event itself too, naming the setting', () => {
    expect(doubleDeliveryWarning({ family: 'web', status: 'not_sent' })).toBeUndefined();
    expect(doubleDeliveryWarning({ family: 'web', status: 'pending' })).toMatch(
      /^warning: the sandbox also delivers web events itself, to its web webhook URL \(--web-webhook-url or --webhook-url\)\. .* twice/,
    );
    expect(doubleDeliveryWarning({ family: 'gateway', status: 'pending' })).toMatch(/merchant's or the transaction's webhook URL/);
  });
});

describe("a refusing receiver's reason", () => {
  const json = (body: unknown, status = 400) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

  it("reads the package handler's error and message, another receiver's message or first line of text", async () => {
    expect(await receiverReason(json({ error: 'invalid_payload', message: "(root) must have required property 'transactionId'" }))).toBe(
      "invalid_payload: (root) must have required property 'transactionId'",
    );
    expect(await receiverReason(json({ error: 'bad_signature' }, 401))).toBe('bad_signature');
    expect(await receiverReason(json({ message: 'order not found' }, 404))).toBe('order not found');
    expect(await receiverReason(new Response('no such order\nat line 3', { status: 500, headers: { 'Content-Type': 'text/plain' } }))).toBe('no such order');
  });

  it('says nothing for an answer without a readable reason, keeps the line one line, and reads a bounded start', async () => {
    expect(await receiverReason(json({ ok: false }))).toBeUndefined();
    expect(await receiverReason(new Response('<html>oops</html>', { status: 500, headers: { 'Content-Type': 'text/html' } }))).toBeUndefined();
    expect(await receiverReason(new Response(null, { status: 502 }))).toBeUndefined();
    expect(await receiverReason(json({ message: 'two\r\nlines\u001b[31m' }))).toBe('two lines [31m');
    const long = await receiverReason(json({ message: 'x'.repeat(10_000) }));
    // The start of a long answer is not JSON: no reason is made up from it.
    expect(long).toBeUndefined();
    const wordy = await receiverReason(json({ message: 'y'.repeat(1_000) }));
    expect(wordy).toBe(`${'y'.repeat(300)}…`);
  });
});
