/**
 * How a family sends its contract webhooks: one `send(event, payload, subject)` per family, made
 * by {@link familyWebhooks} from the family's row (whose receiver, whose key) and the contract
 * (generated/webhooks.js, src/contract/webhooks.ts). The event name and its payload are the
 * contract's types, so a misspelt event or a body that disagrees with its schema's type fails
 * `tsc`. What every event of every family shares is decided here once:
 *
 * - the answers counted as received: the ones the webhook's responses list (`200` for the SDK
 *   webhook, any 2xx or 3xx for the others), read from the generated list;
 * - the order: events of one transaction one after the other, in a scope per owner
 *   (`<family>:<owner>:`, then the transaction id);
 * - the signature: the record names its signer (the owner), and `X-Signature` is computed with
 *   the key the row answers for it when the request is sent or shown, so that no delivery, in
 *   memory or in the shared store, holds a copy of a secret;
 * - the body: the payload's JSON, or, for an event the row makes compact, a few characters that
 *   the row turns back into the same payload (a mass expiry keeps no body per event).
 */
import { stringifyJson } from '../http/raw-json.js';
import { webhookEvents, type WebhookFamily, type WebhookName, type WebhookPayload, type WebhookSuccess } from '../contract/webhooks.js';
import type { FamilyContext } from './context.js';

/** What an event is about: its transaction, its owner, and its own receiver if it has one. */
interface WebhookSubject {
  /** The transaction (events of one transaction are delivered in order; deliveries are filtered by it). */
  readonly transactionId: string;
  /** The partner's or merchant's id: whose receiver and key, and the scope of the order. */
  readonly owner: string;
  /**
   * The receiver of this event when it has its own (the gateway's refund URL or a transaction's
   * override); undefined: the row's `url(owner)`.
   */
  readonly url?: string | undefined;
}

/** An event whose payload follows from its transaction id, a short string and its owner. */
interface CompactEvent<P> {
  /** The short string kept instead of the body. */
  data(payload: P): string;
  /** The payload again; `payload(id, data(p), owner)` must equal `p`. */
  payload(transactionId: string, data: string, owner: string): P;
}

/** A family's row: where its events go and who signs them. */
export interface FamilyWebhooksRow<F extends WebhookFamily> {
  /** The owner's receiver when the event has none of its own; undefined records it `not_sent`. */
  url(owner: string): string | undefined;
  /** The owner's signing key, read each time a request is sent or shown; undefined: unsigned. */
  key(owner: string): string | undefined;
  /** The events kept compact, by name. */
  compact?: { readonly [E in WebhookName<F>]?: CompactEvent<WebhookPayload<F, E>> };
}

/** Sends the webhook `event` of the family with its payload, about `subject`. */
export type SendWebhook<F extends WebhookFamily> = <E extends WebhookName<F>>(event: E, payload: WebhookPayload<F, E>, subject: WebhookSubject) => void;

/** The `send` of `family` (the family being registered), from its row. */
export function familyWebhooks<F extends WebhookFamily>(ctx: FamilyContext, family: F, row: FamilyWebhooksRow<F>): SendWebhook<F> {
  const { deliveries } = ctx;
  deliveries.signWith(family, row.key);
  const compact = (row.compact ?? {}) as Readonly<Record<string, CompactEvent<unknown>>>;
  const success = new Map<string, WebhookSuccess>(webhookEvents(family).map((event) => [event.name, event.successStatus]));
  for (const [event, forms] of Object.entries(compact)) {
    deliveries.template(`${family}.${event}`, (transactionId, data, owner) => stringifyJson(forms.payload(transactionId!, data, owner!)));
  }
  // One string per owner, shared by every delivery of the owner (stored.ts keeps the scope, not the key).
  const scopes = new Map<string, string>();
  const scopeOf = (owner: string): string => {
    let scope = scopes.get(owner);
    if (scope === undefined) {
      if (scopes.size >= 10_000) scopes.clear();
      scope = `${family}:${owner}:`;
      scopes.set(owner, scope);
    }
    return scope;
  };
  return (event, payload, subject) => {
    const forms = compact[event];
    deliveries.record({
      url: subject.url ?? row.url(subject.owner),
      body: forms === undefined ? stringifyJson(payload) : { template: `${family}.${event}`, data: forms.data(payload) },
      signer: subject.owner,
      orderingScope: scopeOf(subject.owner),
      successStatus: success.get(event)!,
      family,
      event,
      transactionId: subject.transactionId,
    });
  };
}
