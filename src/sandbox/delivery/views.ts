/**
 * The request and the view of a stored delivery, made when it is sent or read: the body from
 * the record or its registered template, `X-Signature` from the body and the key of its signer
 * (looked up by the family's `signWith`), the ids from the sequence number, the times from the
 * dispatcher's epoch.
 */
import { sdkSignature } from '../../signature.js';
import type { VirtualClock } from '../clock.js';
import type { DeliveryIds } from './ids.js';
import { orderingKeyOf, type StoredDelivery } from './stored.js';
import type { BodyTemplate, Delivery, SigningKeys } from './types.js';

export class DeliveryViews {
  private readonly templates = new Map<string, BodyTemplate>();
  private readonly keys = new Map<string, SigningKeys>();

  constructor(
    private readonly clock: VirtualClock,
    /** The virtual time the record times count from. */
    private readonly epoch: number,
    readonly ids: DeliveryIds,
  ) {}

  /** Registers the template `name` (see `DeliveryDispatcher.template`). */
  template(name: string, make: BodyTemplate): void {
    this.templates.set(name, make);
  }

  /** Registers how the signers of `family` sign (see `DeliveryDispatcher.signWith`). */
  signWith(family: string, keys: SigningKeys): void {
    this.keys.set(family, keys);
  }

  hasTemplate(name: string): boolean {
    return this.templates.has(name);
  }

  /** The exact body of a delivery. */
  bodyOf(delivery: StoredDelivery): string {
    if (delivery.body !== undefined) return delivery.body;
    return this.templates.get(delivery.template!)!(delivery.transactionId, delivery.data!, delivery.signer);
  }

  eventIdOf(delivery: StoredDelivery): string {
    return this.ids.eventIdOf(delivery.seq, delivery.eventId);
  }

  /** The headers sent with `body`: the extra ones, `X-Signature`, `Content-Type`, `X-Event-Id`. */
  headersOf(delivery: StoredDelivery, body: string): Record<string, string> {
    const headers: Record<string, string> = { ...delivery.headers };
    const key = delivery.signer === undefined ? undefined : this.keys.get(delivery.family)?.(delivery.signer);
    if (key !== undefined) headers['X-Signature'] = sdkSignature(body, key);
    // JSON unless the event gives its own (the web flow's form call to notes.webhook_url).
    headers['Content-Type'] ??= 'application/json';
    headers['X-Event-Id'] = this.eventIdOf(delivery);
    return headers;
  }

  view(delivery: StoredDelivery): Delivery {
    const body = this.bodyOf(delivery);
    const iso = (at: number | null) => (at === null ? null : this.clock.iso(this.epoch + at));
    const view: Delivery = {
      id: delivery.id ?? this.ids.idOf(delivery.seq),
      eventId: this.eventIdOf(delivery),
      family: delivery.family,
      event: delivery.event,
      transactionId: delivery.transactionId,
      url: delivery.url,
      body,
      headers: this.headersOf(delivery, body),
      orderingKey: orderingKeyOf(delivery),
      successStatus: delivery.successStatus,
      status: delivery.status,
      attempts: delivery.attempts.map((attempt, index) => ({
        attempt: index + 1,
        at: this.clock.iso(this.epoch + delivery.createdAt + attempt.after),
        durationMs: attempt.durationMs,
        ...(attempt.statusCode === undefined ? {} : { statusCode: attempt.statusCode }),
        ...(attempt.error === undefined ? {} : { error: attempt.error }),
        ...(attempt.answer === undefined ? {} : { answer: attempt.answer }),
        ...(attempt.answerTruncated === true ? { answerTruncated: true as const } : {}),
      })),
      createdAt: this.clock.iso(this.epoch + delivery.createdAt),
      nextAttemptAt: iso(delivery.nextAttemptAt),
      completedAt: iso(delivery.completedAt),
    };
    if (delivery.reason !== undefined) view.reason = delivery.reason;
    return view;
  }
}
