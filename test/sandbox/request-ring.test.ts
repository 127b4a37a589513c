import { describe, expect, it } from 'vitest';
import { EntryRing, Part } from '../../src/sandbox/request-ring.js';

const route = { family: 'sdk' as const, method: 'POST', path: '/x', operationId: 'x' };

/** Adds an entry whose target is `target` and whose request body is `body`. */
function add(ring: EntryRing, target: string, body = '', at = 0): void {
  ring.text(target);
  ring.end(Part.Target);
  ring.headerList(['Host', 'sandbox', 'X-Empty', '']);
  ring.end(Part.Headers);
  ring.text(`id-${target}`);
  ring.end(Part.RequestId);
  ring.end(Part.Principal);
  ring.end(Part.TransactionId);
  ring.end(Part.Reason);
  ring.headerRecord({ 'Retry-After': '1' });
  ring.end(Part.ResponseHeaders);
  ring.text('{"ok":true}');
  ring.end(Part.ResponseBody);
  ring.raw(Buffer.from(body), 16 * 1024);
  ring.end(Part.RequestBody);
  ring.commit({ at, durationMs: 1.5, status: 200, requestBytes: Buffer.byteLength(body), responseBytes: 11, route });
}

const targets = (ring: EntryRing) => Array.from({ length: ring.length }, (_, index) => ring.part(ring.row(index), Part.Target));

describe('the request log ring', () => {
  it('reads back every part and number of an entry as written', () => {
    const ring = new EntryRing(1 << 20);
    add(ring, 'GET /a', 'body ✓', 42);
    const row = ring.row(0);
    expect(ring.part(row, Part.Target)).toBe('GET /a');
    expect(ring.partHeaders(row, Part.Headers)).toEqual(['Host', 'sandbox', 'X-Empty', '']);
    expect(ring.partHeaders(row, Part.ResponseHeaders)).toEqual(['Retry-After', '1']);
    expect(ring.part(row, Part.RequestId)).toBe('id-GET /a');
    expect(ring.part(row, Part.Principal)).toBe('');
    expect(ring.partBuffer(row, Part.RequestBody).toString()).toBe('body ✓');
    expect(ring.numbers(row)).toEqual({ at: 42, durationMs: 1.5, status: 200, requestBytes: 8, responseBytes: 11, route });
  });

  it('keeps whole characters when a text is cut at its byte bound', () => {
    const ring = new EntryRing(1 << 20);
    ring.text('ééé', 5);
    ring.end(Part.Target);
    for (const part of [Part.Headers, Part.RequestId, Part.Principal, Part.TransactionId, Part.Reason, Part.ResponseHeaders, Part.ResponseBody, Part.RequestBody]) ring.end(part);
    ring.commit({ at: 0, durationMs: 0, status: 200, requestBytes: 0, responseBytes: 0, route: undefined });
    expect(ring.part(ring.row(0), Part.Target)).toBe('éé');
  });

  it('forgets the oldest entries first within its budget, across many laps of its bytes, and grows its rows in order', () => {
    const ring = new EntryRing(64 * 1024);
    for (let index = 0; index < 20_000; index++) add(ring, `GET /${index}`, 'x'.repeat(index % 700));
    expect(ring.bytes).toBeLessThanOrEqual(64 * 1024);
    const held = targets(ring);
    expect(held.length).toBeGreaterThan(50);
    // The entries held are the latest, in order, none damaged by a later one's bytes.
    expect(held).toEqual(Array.from({ length: held.length }, (_, index) => `GET /${20_000 - held.length + index}`));
    for (let index = 0; index < ring.length; index++) {
      const row = ring.row(index);
      const number = 20_000 - held.length + index;
      expect(ring.partBuffer(row, Part.RequestBody).toString()).toBe('x'.repeat(number % 700));
      expect(ring.part(row, Part.RequestId)).toBe(`id-GET /${number}`);
    }
  });

  it('keeps the order when its rows grow after the oldest entries were forgotten', () => {
    const ring = new EntryRing(64 * 1024);
    for (let index = 0; index < 200; index++) add(ring, `POST /big/${index}`, 'x'.repeat(600));
    for (let index = 0; index < 1000; index++) add(ring, `GET /${index}`);
    const held = targets(ring);
    expect(held.length).toBeGreaterThan(256);
    expect(held.at(-1)).toBe('GET /999');
    expect(held).toEqual(Array.from({ length: held.length }, (_, index) => `GET /${1000 - held.length + index}`));
  });

  it('keeps an entry larger than its whole budget as its only entry, then goes on', () => {
    const ring = new EntryRing(4096);
    add(ring, 'GET /small');
    add(ring, 'POST /big', 'b'.repeat(900));
    for (let index = 0; index < 3; index++) add(ring, 'POST /bigger', 'c'.repeat(5000 + index));
    expect(targets(ring)).toEqual(['POST /bigger']);
    expect(ring.partBuffer(ring.row(0), Part.RequestBody).toString()).toBe('c'.repeat(5002));
    for (let index = 0; index < 100; index++) add(ring, `GET /${index}`);
    expect(targets(ring).at(-1)).toBe('GET /99');
    expect(ring.bytes).toBeLessThanOrEqual(4096);
  });
});
