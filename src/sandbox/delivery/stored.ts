/**
 * What the dispatcher keeps of a delivery (D62): what it takes to make the request again, not the
 * request. Times are virtual milliseconds after the dispatcher's start, the record is keyed by a
 * sequence number (ids.ts makes the ids from it), the body may be a template's name and data
 * (views.ts makes the text), and an ordering key that ends with the transaction id keeps one shared
 * string per scope. Records are never changed once made: a change writes a new one ({@link changed}).
 */
import type { DeliveryStatus, SuccessStatus } from './types.js';

/** One attempt as the store keeps it. */
export interface StoredAttempt {
  /** When it started: virtual milliseconds after the delivery was created. */
  after: number;
  durationMs: number;
  statusCode: number | undefined;
  error: string | undefined;
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
  readonly event: string;
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

/** The attempts of a delivery not attempted yet: one frozen empty list shared by all. */
export const NO_ATTEMPTS: StoredAttempt[] = Object.freeze([]) as unknown as StoredAttempt[];

/**
 * A delivery with its attempts and state changed. Written out field by field: a copy made with
 * spread syntax from a frozen record keeps most fields outside the object, in a second allocation.
 */
export function changed(
  current: StoredDelivery,
  attempts: StoredAttempt[],
  status: DeliveryStatus,
  nextAttemptAt: number | null,
  completedAt: number | null,
): StoredDelivery {
  return {
    seq: current.seq,
    id: current.id,
    eventId: current.eventId,
    family: current.family,
    event: current.event,
    transactionId: current.transactionId,
    url: current.url,
    body: current.body,
    template: current.template,
    data: current.data,
    signer: current.signer,
    headers: current.headers,
    orderingScope: current.orderingScope,
    orderingKey: current.orderingKey,
    successStatus: current.successStatus,
    status,
    reason: current.reason,
    attempts,
    createdAt: current.createdAt,
    nextAttemptAt,
    completedAt,
  };
}

const scopeCache = new Map<string, string>();

/** The scope of an ordering key `<scope><transactionId>` (one shared string per scope), if it is one. */
export function scopeOf(orderingKey: string, transactionId: string | undefined): string | undefined {
  if (transactionId === undefined || orderingKey.length <= transactionId.length || !orderingKey.endsWith(transactionId)) return undefined;
  return shared(orderingKey.slice(0, orderingKey.length - transactionId.length));
}

/** One string object for every equal scope. */
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
