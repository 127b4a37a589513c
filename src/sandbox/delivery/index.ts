/**
 * Webhook delivery: the one module the rest of the sandbox imports of `delivery/`. The
 * machinery behind it (the queue and the per-receiver limits, the retry schedule, retention and
 * paging, the ids, cursors and templated bodies, the lazy index by transaction) stays inside the
 * folder, and .dependency-cruiser.cjs keeps the families and the gateway engine out of it.
 *
 * A family sees {@link WebhookDeliveries} (`ctx.deliveries`): it records events, registers the
 * templates of their bodies and checks the webhook URLs it accepts. The server holds the whole
 * {@link DeliveryDispatcher}; the control endpoints read it a page at a time.
 */
import type { DeliveryDispatcher } from './dispatcher.js';

export { DeliveryDispatcher } from './dispatcher.js';
export { MAX_LOCAL_RETRIES } from './retry.js';
export { DELIVERY_STATUSES, DeliveryQueryError, MAX_PAGE_LIMIT, type Delivery, type DeliveryStatus, type EnqueueInput } from './types.js';

/**
 * What a family uses of webhook delivery: `record` (or `enqueue`, which also answers the view) an
 * event, register a body `template` and its signers' keys (`signWith`), and ask what is wrong with
 * a webhook URL (`targetProblem`). Families send their contract webhooks through
 * ../webhook-events.ts, which does all of it from one table.
 */
export type WebhookDeliveries = Pick<DeliveryDispatcher, 'enqueue' | 'record' | 'template' | 'signWith' | 'targetProblem'>;
