/**
 * The one record of a delivery: what it takes to make the request again, not the request.
 * The dispatcher's history, its queues and indexes hold it, and the shared store keeps the same
 * fields as JSON (journal.ts). Times are virtual milliseconds after the dispatcher's start, the
 * record is keyed by a sequence number (ids.ts makes the ids from it), the body may be a
 * template's name and data (views.ts makes the text), the signature is made with the key of its
 * signer, and an ordering key that ends with the transaction id keeps one shared string per scope.
 * Every record is made by {@link storedDelivery}; none is changed once made: a change makes a new
 * one ({@link changed}).
 */
import type { DeliveryEvent, DeliveryStatus, SuccessStatus } from './types.js';

/** One attempt as the store keeps it. */
export interface StoredAttempt {
  /** When it started: virtual milliseconds after the delivery was created. */
  after: number;
  durationMs: number;
  statusCode: number | undefined;
  error: string | undefined;
  /**
   * The start of the receiver's answer (webhook-client.ts, at most 256 bytes), one string object
   * for equal answers ({@link shared}): a receiver answers the same text again and again.
   */
  answer: string | undefined;
  /** Whether the answer went on beyond {@link answer}; only when it did. */
  answerTruncated: true | undefined;
}

/**
 * What the dispatcher keeps of a delivery, keyed by its sequence number: the view (`Delivery`) is
 * made from it when read. The id is `dlv_<20 hex digits of the process><the sequence number - 1,
 * 12 hex digits>`, made only for a view; the event id the same with `evt_` unless one was given.
 */
export interface StoredDelivery {
  readonly seq: number;
  /**
   * The id, only when it does not follow from `seq`: a delivery another process recorded (shared
   * store, journal.ts), which keeps the id and event id it was given there.
   */
  readonly id: string | undefined;
  /** Only when given to `enqueue`. */
  readonly eventId: string | undefined;
  readonly family: string;
  readonly event: DeliveryEvent | (string & {});
  readonly transactionId: string | undefined;
  readonly url: string | null;
  /** The body, or the template that makes it from `data`. */
  readonly body: string | undefined;
  readonly template: string | undefined;
  readonly data: string | undefined;
  /** Whose key signs it (a partner's or merchant's id); the key itself is looked up when needed. */
  readonly signer: string | undefined;
  readonly headers: Record<string, string> | undefined;
  /**
   * The ordering key is `orderingScope + transactionId` when it ends with the transaction id (one
   * string per scope, such as `sdk:partner_test:`, shared by every record), else `orderingKey`.
   */
  readonly orderingScope: string | undefined;
  readonly orderingKey: string | undefined;
  readonly successStatus: SuccessStatus;
  readonly status: DeliveryStatus;
  readonly reason: string | undefined;
  readonly attempts: StoredAttempt[];
  /**
   * Virtual milliseconds after the dispatcher's start (`epoch`): small whole numbers, which V8 keeps
   * in the object itself, where epoch milliseconds take a separate 16-byte number each. (Delivery
   * records do not outlive their dispatcher: its indexes are in memory.)
   */
  readonly createdAt: number;
  readonly nextAttemptAt: number | null;
  readonly completedAt: number | null;
}

/**
 * A delivery record with every field, in one order. Written out field by field (one hidden class
 * for every record, however it was made): a copy made with spread syntax from a frozen record
 * keeps most fields outside the object, in a second allocation, and a record read from JSON lacks
 * the fields that were undefined.
 */
export function storedDelivery(fields: StoredDelivery): StoredDelivery {
  return {
    seq: fields.seq,
    id: fields.id,
    eventId: fields.eventId,
    family: fields.family,
    event: fields.event,
    transactionId: fields.transactionId,
    url: fields.url,
    body: fields.body,
    template: fields.template,
    data: fields.data,
    signer: fields.signer,
    headers: fields.headers,
    orderingScope: fields.orderingScope,
    orderingKey: fields.orderingKey,
    successStatus: fields.successStatus,
    status: fields.status,
    reason: fields.reason,
    attempts: fields.attempts.length === 0 ? NO_ATTEMPTS : fields.attempts,
    createdAt: fields.createdAt,
    nextAttemptAt: fields.nextAttemptAt,
    completedAt: fields.completedAt,
  };
}

/** Why an event with no receiver was not sent (the journal leaves it out of the stored row). */
export const NO_URL_REASON = 'No webhook URL is configured.';

/** The attempts of a delivery not attempted yet: one frozen empty list shared by all. */
export const NO_ATTEMPTS: StoredAttempt[] = Object.freeze([]) as unknown as StoredAttempt[];

/** A delivery with its attempts and state changed. */
export function changed(
  current: StoredDelivery,
  attempts: StoredAttempt[],
  status: DeliveryStatus,
  nextAttemptAt: number | null,
  completedAt: number | null,
): StoredDelivery {
  return storedDelivery({ ...current, attempts, status, nextAttemptAt, completedAt });
}

const scopeCache = new Map<string, string>();

/** The scope of an ordering key `<scope><transactionId>` (one shared string per scope), if it is one. */
export function scopeOf(orderingKey: string, transactionId: string | undefined): string | undefined {
  if (transactionId === undefined || orderingKey.length <= transactionId.length || !orderingKey.endsWith(transactionId)) return undefined;
  return shared(orderingKey.slice(0, orderingKey.length - transactionId.length));
}

/** One string object for every equal scope (or answer's start, a short text too). */
export function shared(scope: string): string {
  let found = scopeCache.get(scope);
  if (found === undefined) {
    if (scopeCache.size >= 10_000) scopeCache.clear();
    found = scope;
    scopeCache.set(scope, found);
  }
  return found;
}

export function orderingKeyOf(delivery: StoredDelivery): string {
  return delivery.orderingScope === undefined ? delivery.orderingKey! : delivery.orderingScope + delivery.transactionId!;
}
