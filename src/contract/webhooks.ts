/**
 * The webhook events of the contract: every family's webhooks, as `npm run generate` reads them from
 * the bundled documents into generated/webhooks.js. The one list of events: the verifier, the
 * sandbox's stream, `paylater listen` and the samples take the families with webhooks and the event
 * names from here, so a webhook added to a document reaches them all. Small and free of the schemas
 * (the model, ./model.ts, compiles those), so that the CLI can read it when it starts.
 */
import { webhooks as GENERATED, type WebhookPayloads } from '../../generated/webhooks.js';
import { FAMILIES, type Family } from './families.js';

type Generated = typeof GENERATED;

/** The families whose document has webhooks. */
export type WebhookFamily = { [F in Family]: Generated[F] extends readonly [] ? never : F }[Family];

/** The webhook names of a family (`transactionStatus`; `transactionUpdated` or `refundUpdated`). */
export type WebhookName<F extends WebhookFamily = WebhookFamily> = Generated[F][number]['name'];

/** The body of the webhook `E` of family `F`: the type generated from its schema. */
export type WebhookPayload<F extends WebhookFamily, E extends WebhookName<F>> = WebhookPayloads[F][E & keyof WebhookPayloads[F]];

/** The body's one property of the webhook `E` (`transaction`, `refund`), or never when its body is not wrapped. */
export type WebhookEnvelope<F extends WebhookFamily, E extends WebhookName<F>> = Extract<
  Generated[F][number],
  { readonly name: E; readonly envelope: string }
>['envelope'];

/**
 * Which answers of the receiver count as received, as the webhook's responses list them: exactly
 * 200 (the SDK webhook, as described), any 2xx, or any 2xx or 3xx (a redirect is not followed).
 */
export type WebhookSuccess = Generated[WebhookFamily][number]['successStatus'] | '2xx';

/** One webhook event of the contract. */
export interface WebhookEvent {
  readonly family: WebhookFamily;
  /** Its name under the document's `webhooks`. */
  readonly name: string;
  /** Upper case (`POST`). */
  readonly method: string;
  readonly successStatus: WebhookSuccess;
  /**
   * The body's one property when the body is one object wrapped (`{ transaction }`, `{ refund }`):
   * the gateway's verified events name it as their `kind`. Events are told apart by their
   * schemas, not by it (src/webhooks/verify.ts).
   */
  readonly envelope?: string;
}

const BY_FAMILY: Readonly<Record<string, readonly WebhookEvent[]>> = Object.freeze(
  Object.fromEntries(
    FAMILIES.map((family) => [
      family,
      Object.freeze((GENERATED[family] as readonly Omit<WebhookEvent, 'family'>[]).map((webhook) => Object.freeze({ family, ...webhook }) as WebhookEvent)),
    ]),
  ),
);

export function isWebhookFamily(value: unknown): value is WebhookFamily {
  return typeof value === 'string' && (BY_FAMILY[value]?.length ?? 0) > 0;
}

/** The families whose document has webhooks, in the order of {@link FAMILIES}. */
export const WEBHOOK_FAMILIES: readonly WebhookFamily[] = Object.freeze(FAMILIES.filter(isWebhookFamily));

/** The webhooks of a family, in its document's order. */
export function webhookEvents(family: WebhookFamily): readonly WebhookEvent[] {
  return BY_FAMILY[family] ?? [];
}


/** Every webhook event of the contract. */
export const WEBHOOK_EVENTS: readonly WebhookEvent[] = Object.freeze(WEBHOOK_FAMILIES.flatMap(webhookEvents));
