/**
 * The sandbox-only endpoints shared by every family (docs/sandbox.md):
 *   GET  /sandbox/clock                      the virtual time
 *   POST /sandbox/clock/advance {"ms": n}    move it forward, firing what falls due
 *   GET  /sandbox/webhooks/deliveries        every webhook delivery and its attempts
 *        [?transactionId=...]
 * Families add their own (user actions) through `ctx.sandboxRoute`.
 */
import type { VirtualClock } from './clock.js';
import type { DeliveryDispatcher } from './delivery.js';
import type { ErrorHelpers } from './errors.js';
import { RequestError, type Reply, type SandboxHandler } from './router.js';
import type { SandboxMethod } from './context.js';

/** The largest single advance: 30 days. */
export const MAX_ADVANCE_MS = 30 * 24 * 60 * 60 * 1000;

export interface ControlContext {
  sandboxRoute(method: SandboxMethod, path: string, handler: SandboxHandler): void;
  clock: VirtualClock;
  deliveries: DeliveryDispatcher;
  errors: ErrorHelpers;
}

export function registerControl(ctx: ControlContext): void {
  const { clock, deliveries, errors } = ctx;
  const clockReply = (extra: Record<string, unknown> = {}): Reply => ({
    status: 200,
    body: { now: clock.iso(), nowMs: clock.now(), offsetMs: clock.offsetMs, ...extra },
  });

  ctx.sandboxRoute('GET', '/sandbox/clock', () => clockReply());

  ctx.sandboxRoute('POST', '/sandbox/clock/advance', (request) => {
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
    clock.advance(ms);
    return clockReply({ advancedMs: ms });
  });

  ctx.sandboxRoute('GET', '/sandbox/webhooks/deliveries', (request) => {
    const transactionId = request.query.get('transactionId') ?? undefined;
    return { status: 200, body: { deliveries: deliveries.list({ transactionId }) } };
  });
}
