/**
 * What the dispatcher's users see of a webhook delivery: the view of a delivery and its
 * attempts, what `enqueue` takes, the page query and its answer. Nothing here is how a delivery is
 * kept (stored.ts) or sent (dispatcher.ts).
 */
import type { WebhookFamily, WebhookName, WebhookSuccess } from '../../contract/webhooks.js';

/**
 * The events a delivery may be: a webhook of the contract, or the web flow's call to the URL of
 * the initiate's `notes.webhook_url` (`transactionResult`, web-notes-webhook.ts), which is no
 * webhook of the web document.
 */
export type DeliveryEvent = WebhookName | 'transactionResult';

/** The default and the largest page of `DeliveryDispatcher.page`. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export type DeliveryStatus = 'pending' | 'delivered' | 'abandoned' | 'not_sent';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'abandoned', 'not_sent'];

/**
 * Which answers of the receiver count as received: exactly 200 (the SDK webhook, as described),
 * any 2xx, or any 2xx or 3xx (the web and gateway webhooks: receivers in the field answer a
 * redirect, which is not followed).
 */
export type SuccessStatus = WebhookSuccess;

/** Whether a receiver's HTTP status counts as received under `successStatus`. */
export function isReceived(successStatus: SuccessStatus, statusCode: number): boolean {
  if (successStatus === 200) return statusCode === 200;
  if (successStatus === '2xx') return statusCode >= 200 && statusCode < 300;
  return statusCode >= 200 && statusCode < 400;
}

interface DeliveryAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** When it started (virtual time, RFC 3339). */
  at: string;
  /** How long it took, real milliseconds. */
  durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  statusCode?: number;
  /** Why no HTTP status was received (timeout, connection refused, ...). */
  error?: string;
  /** The start of the receiver's answer (its first 256 bytes at most, as text), when it had a body. */
  answer?: string;
  /** `true` when the answer went on beyond `answer`. */
  answerTruncated?: true;
}

export interface Delivery {
  id: string;
  /** Sent as `X-Event-Id`; the same on every attempt. */
  eventId: string;
  /** `sdk`, `web`, `gateway`. */
  family: string;
  /** The webhook's name in the family's document, e.g. `transactionStatus`. */
  event: string;
  /** The transaction the event is about, for filtering. */
  transactionId: string | undefined;
  /** `null` when no webhook URL is configured (status `not_sent`). */
  url: string | null;
  /** The exact body sent. */
  body: string;
  /** The headers sent (Content-Type, X-Event-Id, X-Signature, ...). */
  headers: Record<string, string>;
  orderingKey: string;
  successStatus: SuccessStatus;
  status: DeliveryStatus;
  /** Why it was not sent (status `not_sent`). */
  reason?: string;
  attempts: DeliveryAttempt[];
  createdAt: string;
  /** When the next attempt is due (virtual time), while pending and waiting. */
  nextAttemptAt: string | null;
  /** When it was delivered or abandoned. */
  completedAt: string | null;
}

export interface EnqueueInput {
  /** The receiver; `undefined`/`null` records the event as `not_sent`. */
  url: string | null | undefined;
  /**
   * The exact body to send, or the template that makes it (`DeliveryDispatcher.template`): for an
   * event whose body follows from a little data, so that the record does not keep the text.
   */
  body: string | TemplatedBody;
  /**
   * Whose key signs it: the partner's or the merchant's id. `X-Signature: base64(SHA-256(body +
   * key))` is computed when the request is sent or read, with the key the family's
   * `signWith` answers for this id, so that no record (nor the shared store's row) holds a
   * secret. Without it no `X-Signature` is sent, unless `headers` has one.
   */
  signer?: string | undefined;
  /**
   * Extra headers, sent as given. `X-Event-Id` is set here, and `Content-Type` to
   * `application/json` unless given.
   */
  headers?: Record<string, string>;
  /**
   * Events with the same key are delivered one after the other, in enqueue order. Give the key, or
   * the scope of a key that ends with the transaction id: `orderingScope + transactionId`.
   */
  orderingKey?: string;
  orderingScope?: string;
  successStatus: SuccessStatus;
  /** Default: a new unique id. */
  eventId?: string;
  family: WebhookFamily;
  event: DeliveryEvent;
  transactionId?: string;
}

/** A body made by a registered template from `data` (and the delivery's transaction id and signer). */
export interface TemplatedBody {
  template: string;
  data: string;
}

/** Makes the exact body of an event from its transaction id, data and signer; the same every time. */
export type BodyTemplate = (transactionId: string | undefined, data: string, signer: string | undefined) => string;

/** The signing key of a signer (a partner's or merchant's id), or undefined to send no signature. */
export type SigningKeys = (signer: string) => string | undefined;

/** A page of deliveries, in creation order or newest first. */
export interface DeliveryQuery {
  /** `oldest` (creation order, the default) or `newest` first. */
  order?: 'oldest' | 'newest' | undefined;
  transactionId?: string | undefined;
  family?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** 1 to {@link MAX_PAGE_LIMIT}; default {@link DEFAULT_PAGE_LIMIT}. */
  limit?: number | undefined;
  /** `nextCursor` of the previous page, with the same filters. */
  after?: string | undefined;
}

export interface DeliveryPage {
  deliveries: Delivery[];
  /** Pass as `after` for the next page; null when there is none. */
  nextCursor: string | null;
}

/** A query `DeliveryDispatcher.page` cannot answer; `field` names the parameter. */
export class DeliveryQueryError extends Error {
  override readonly name = 'DeliveryQueryError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}
