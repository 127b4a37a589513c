/**
 * The sandbox-only endpoints shared by every family (docs/sandbox.md):
 *   GET  /sandbox/clock                      the virtual time
 *   POST /sandbox/clock/advance {"ms": n}    move it forward, firing what falls due
 *   GET  /sandbox/webhooks/deliveries        the webhook deliveries and their attempts, a page at a time
 *        [?limit=1..1000&after=<nextCursor>&transactionId=...&family=...&status=...]
 *   POST /sandbox/webhooks/deliveries/{id}/resend   the same event again, as a new delivery
 * Families add their own (user actions) through `ctx.sandboxRoute`.
 */
import { randomBytes } from 'node:crypto';
import type { VirtualClock } from './clock.js';
import { DELIVERY_STATUSES, DeliveryQueryError, MAX_PAGE_LIMIT, type DeliveryDispatcher, type DeliveryStatus, type EnqueueInput } from './delivery/index.js';
import type { ErrorHelpers } from './errors.js';
import { RequestError, type Reply, type SandboxHandler } from './router.js';
import { shownWebhookUrl } from './shown-url.js';
import type { SandboxMethod } from './context.js';
import type { SandboxAccess } from './access.js';

/** The largest single advance: 30 days. */
const MAX_ADVANCE_MS = 30 * 24 * 60 * 60 * 1000;

export interface ControlContext {
  sandboxRoute(method: SandboxMethod, path: string, handler: SandboxHandler): void;
  clock: VirtualClock;
  deliveries: DeliveryDispatcher;
  errors: ErrorHelpers;
  access: SandboxAccess;
}

export function registerControl(ctx: ControlContext): void {
  const { clock, deliveries, errors, access } = ctx;
  const clockReply = (extra: Record<string, unknown> = {}): Reply => ({
    status: 200,
    body: { now: clock.iso(), nowMs: clock.now(), offsetMs: clock.offsetMs, ...extra },
  });

  ctx.sandboxRoute('GET', '/sandbox/clock', () => clockReply());

  ctx.sandboxRoute('POST', '/sandbox/clock/advance', async (request) => {
    // The clock is every tenant's: hosted, only the operator moves it.
    if (!access.isOperator(request)) {
      return errors.error(403, 'FORBIDDEN', 'This sandbox is hosted and its clock is shared: only the operator (Authorization: Bearer <token>) moves it.');
    }
    const body = request.json();
    const ms = (body as { ms?: unknown } | undefined)?.ms;
    if (
      body === null ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      typeof ms !== 'number' ||
      !Number.isInteger(ms) ||
      ms < 0 ||
      ms > MAX_ADVANCE_MS
    ) {
      throw new RequestError(
        errors.badRequest(`The body must be {"ms": n} with n an integer from 0 to ${MAX_ADVANCE_MS}.`, [
          { field: '/ms', issue: `must be an integer from 0 to ${MAX_ADVANCE_MS}` },
        ]),
      );
    }
    // In slices: an advance over 100,000 timers does not hold up other requests.
    await clock.advanceInSlices(ms);
    return clockReply({ advancedMs: ms });
  });

  ctx.sandboxRoute('GET', '/sandbox/webhooks/deliveries', (request) => {
    const query = request.query;
    const bad = (field: string, text: string, issue: string): never => {
      throw new RequestError(errors.badRequest(text, [{ field, issue }]));
    };
    for (const name of ['limit', 'after', 'transactionId', 'family', 'status', 'order']) {
      if (query.getAll(name).length > 1) bad(name, `${name} may be given once.`, 'must be given at most once');
    }
    const rawLimit = query.get('limit');
    let limit: number | undefined;
    if (rawLimit !== null) {
      limit = /^[0-9]{1,7}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
      if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
        bad('limit', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT} (default 100).`, `must be from 1 to ${MAX_PAGE_LIMIT}`);
      }
    }
    const status = query.get('status') ?? undefined;
    if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      bad('status', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`, `must be one of ${DELIVERY_STATUSES.join(', ')}`);
    }
    const order = query.get('order') ?? undefined;
    if (order !== undefined && order !== 'oldest' && order !== 'newest') {
      bad('order', 'order must be oldest (creation order, the default) or newest (newest first).', 'must be oldest or newest');
    }
    try {
      const page = deliveries.page({
        order: order as 'oldest' | 'newest' | undefined,
        limit,
        after: query.get('after') ?? undefined,
        transactionId: query.get('transactionId') ?? undefined,
        family: query.get('family') ?? undefined,
        status: status as DeliveryStatus | undefined,
      });
      // Hosted, a tenant's page holds its own deliveries only (it may hold fewer than `limit`; follow nextCursor).
      const tenant = access.tenant(request);
      const visible = tenant.kind === 'operator' ? page.deliveries : page.deliveries.filter((delivery) => access.seesDelivery(tenant, delivery));
      // The URL's path and query may hold the receiver's token: shown as host and fingerprint.
      const shown = visible.map((delivery) => ({ ...delivery, url: delivery.url === null ? null : shownWebhookUrl(delivery.url) }));
      return { status: 200, body: { ...page, deliveries: shown } };
    } catch (error) {
      if (error instanceof DeliveryQueryError) return bad(error.field, error.message, 'is not valid');
      throw error;
    }
  });

  // A resend is a new delivery of the same event (the same X-Event-Id, body and signature) to
  // the same URL, with its own attempts and retries; the original stays as it was. It has an ordering
  // key of its own: it is sent at once, not behind the transaction's events still being retried.
  ctx.sandboxRoute('POST', '/sandbox/webhooks/deliveries/{id}/resend', (request) => {
    const original = deliveries.get(request.params.id ?? '');
    // Hosted, another tenant's delivery is answered as one that does not exist.
    if (original === undefined || !access.seesDelivery(access.tenant(request), original)) {
      return errors.notFound('No delivery with that id is held: ids are the "id" of GET /sandbox/webhooks/deliveries, and old completed deliveries are forgotten (--retain-deliveries).');
    }
    const resent = deliveries.enqueue({
      url: original.url,
      body: original.body,
      headers: original.headers,
      eventId: original.eventId,
      orderingKey: `resend:${randomBytes(8).toString('hex')}:${original.orderingKey}`,
      successStatus: original.successStatus,
      // The record's own family and event, read back from its view.
      family: original.family as EnqueueInput['family'],
      event: original.event as EnqueueInput['event'],
      ...(original.transactionId === undefined ? {} : { transactionId: original.transactionId }),
    });
    return { status: 201, body: { delivery: { ...resent, url: resent.url === null ? null : shownWebhookUrl(resent.url) }, resentFrom: original.id } };
  });
}
