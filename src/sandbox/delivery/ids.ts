/**
 * The ids of deliveries and the cursors of their pages, both made from a delivery's sequence number:
 * a record is keyed by a small integer, and its id string is made only for a view.
 *
 * - Ids: `dlv_` then 20 random hex digits of this process, then the sequence number - 1 in 12 hex
 *   digits: unique across restarts, and read back to the number without a lookup. The event id is
 *   the same with `evt_` unless one was given.
 * - Cursors: the sequence number of the last record looked at and an HMAC of it with the page's
 *   filters, under a key of this process, so a cursor cannot be forged or reused with other
 *   filters; compared in constant time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DeliveryQueryError } from './types.js';

export class DeliveryIds {
  /** `dlv_` and 20 random hex digits of this process. */
  private readonly idStart = `dlv_${randomBytes(10).toString('hex')}`;
  private readonly cursorKey = randomBytes(32);

  /** The id of the delivery with this sequence number. */
  idOf(seq: number): string {
    return this.idStart + (seq - 1).toString(16).padStart(12, '0');
  }

  /** The event id of a delivery: the one given to `enqueue`, else made from its sequence number. */
  eventIdOf(seq: number, eventId: string | undefined): string {
    return eventId ?? `evt_${this.idOf(seq).slice(4)}`;
  }

  /** The sequence number of an id this dispatcher made, else undefined. */
  seqOf(id: string): number | undefined {
    if (id.length !== this.idStart.length + 12 || !id.startsWith(this.idStart)) return undefined;
    const hex = id.slice(this.idStart.length);
    return /^[0-9a-f]{12}$/.test(hex) ? Number.parseInt(hex, 16) + 1 : undefined;
  }

  /** The cursor that goes on after `seq` with the filters `scope`. */
  writeCursor(seq: number, scope: string): string {
    return Buffer.from(`${seq}.${this.mac(seq, scope).toString('base64url')}`, 'utf8').toString('base64url');
  }

  /** The sequence number of a cursor {@link writeCursor} made for `scope`; else throws a `DeliveryQueryError`. */
  readCursor(cursor: string, scope: string): number {
    const invalid = () =>
      new DeliveryQueryError(
        'after',
        'after is not a cursor this sandbox issued for these filters; pass nextCursor of the previous page unchanged, with the same filters.',
      );
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    const match = /^([0-9]{1,15})\.([A-Za-z0-9_-]{16})$/.exec(text);
    if (match === null || Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw invalid();
    const seq = Number(match[1]);
    const expected = this.mac(seq, scope);
    const given = Buffer.from(match[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    return seq;
  }

  private mac(seq: number, scope: string): Buffer {
    return createHmac('sha256', this.cursorKey).update(`${seq}\u0000${scope}`).digest().subarray(0, 12);
  }
}
