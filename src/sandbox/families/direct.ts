/**
 * What the web and SDK flows share: the statuses of a direct-integration transaction, the
 * user's actions that finish it, played by the sandbox endpoints `.../confirm|cancel|fail`, the
 * lifecycle that expires, finishes and announces it, and the refund rules.
 */
import type { components as SdkComponents } from '../../../generated/types/sdk.js';
import type { components as WebComponents } from '../../../generated/types/web.js';
import type { ClockTimer } from '../clock.js';
import type { WebhookPayload } from '../../contract/webhooks.js';
import type { ErrorCode } from '../../contract/error-codes.js';
import type { DirectFlow } from '../config.js';
import type { FamilyContext } from '../context.js';
import { paiseAndRupees, rupeeLookingWarning } from '../amounts.js';
import { finalRecords } from '../retention.js';
import type { ErrorHelpers, ErrorReply } from '../errors.js';
import type { ChildRecords, Collection } from '../store.js';
import { familyWebhooks, type FamilyWebhooksRow, type SendWebhook } from '../webhook-events.js';
import { partnerKey } from './partner.js';
import { ShardedMap } from '../sharded-map.js';

/** The status of a web or SDK transaction: the same four values in both documents. */
export type DirectStatus = SdkComponents['schemas']['SdkTransactionStatus'] & WebComponents['schemas']['WebTransactionStatus'];

/** The user's action in the app or on the hosted page, and the final status it leads to. */
const USER_ACTIONS = Object.freeze({
  confirm: 'SUCCESS',
  cancel: 'CANCELLED',
  fail: 'FAILURE',
} as const satisfies Record<string, Exclude<DirectStatus, 'PENDING'>>);

/** What the lifecycle needs of a web or SDK transaction record. */
export interface DirectRecord {
  partnerId: string;
  /** Paise. */
  amount: number;
  status: DirectStatus;
  failureReason?: string;
  updatedAt: number;
  expiresAt: number;
}

export type FinalStatus = Exclude<DirectStatus, 'PENDING'>;

/** How many amounts that look like rupees each flow logs. */
export const MAX_RUPEE_WARNINGS = 20;

export interface DirectLifecycleSettings<T extends DirectRecord, F extends DirectFlow> {
  collection: Collection<T>;
  /** The collection's name in the store (to observe records written by other processes). */
  collectionName: string;
  idOf(transaction: T): string;
  /**
   * The `transactionStatus` webhook's payload of a transaction's final status; the
   * lifecycle sends it. Made from the id, the status and the key of the transaction's partner
   * alone, again each time the event is sent or read (the delivery keeps the status only).
   */
  webhookPayload(id: string, status: FinalStatus, privateKey: string): WebhookPayload<F, 'transactionStatus'>;
  /** How the sandbox endpoints name a transaction: the path parameter and a label for messages. */
  pathParam: string;
  label: string;
  /**
   * A changeable copy of the record, written field by field with every optional field present (a
   * copy made with spread syntax from a frozen record is slow to make and keeps most fields in a
   * second allocation; an added field gives it a hidden class of its own).
   */
  copy(transaction: T): T;
  /** Forgets what else the family keeps of a transaction that retention forgets (refunds, sessions). */
  onEvict?: (id: string) => void;
  /** The bytes the record's kept JSON (web `notes`) counts against `limits.notesBytes` (default 0). */
  bytesOf?: (transaction: T) => number;
  /** How long a PENDING transaction lives: the `Retry-After` of a refused initiate. */
  expiryMs: number;
  /** Sends what else a final status sends (the web flow's call to notes.webhook_url). */
  onFinal?: (updated: T) => void;
}

/**
 * The life of a direct-integration transaction, the same in the web and SDK flows: it
 * starts PENDING, expires to FAILURE when due, reaches one final status once, and each final status
 * sends the signed webhook to the partner's URL. Also registers the user's actions,
 * `POST /sandbox/<family>/transactions/{id}/confirm|cancel|fail`.
 *
 * The expiry timer of a transaction is cancelled when it reaches a final status, and a final
 * transaction joins the retention queue (retention.ts): beyond the limit the oldest are forgotten.
 */
export function directLifecycle<T extends DirectRecord, F extends DirectFlow>(ctx: FamilyContext, flow: F, settings: DirectLifecycleSettings<T, F>) {
  const { collection, idOf } = settings;
  const { clock, config } = ctx;
  const expiries = new ShardedMap<string, ClockTimer>();
  // Each flow's webhooks go to its own receiver, signed with the key of the transaction's
  // partner (the configured one or the published test partner). The payload follows from the
  // id, the final status and the partner: the delivery keeps the status only.
  const row: FamilyWebhooksRow<DirectFlow> = {
    url: () => config.partner.webhookUrls[flow],
    key: (partnerId) => partnerKey(config, partnerId),
    compact: {
      transactionStatus: {
        data: (payload) => payload.status,
        payload: (id, status, partnerId) => settings.webhookPayload(id, status as FinalStatus, partnerKey(config, partnerId)),
      },
    },
  };
  const send = familyWebhooks<DirectFlow>(ctx, flow, row);
  /**
   * The same `send` typed for this flow alone, for the family module's own events: typed for both
   * flows, the payload of an event that only one flow has is `never`. The function is one and the
   * same (`familyWebhooks` reads the events of `flow`, the value, by name), so the family's
   * receiver, key and order are shared and the family is registered with the deliveries once.
   */
  const flowSend = send as unknown as SendWebhook<F>;
  const retention = finalRecords(ctx.store, config.retention.transactions, clock, config.limits.notesBytes);
  // PENDING transactions per partner id (limits.pendingPerPartner).
  const pendingCount = new Map<string, number>();
  const bytesOf = settings.bytesOf ?? (() => 0);
  retention.register(ctx.family, (id) => {
    // Before the record goes: onEvict reads it (how many refunds to forget).
    settings.onEvict?.(id);
    collection.delete(id);
    return 'evicted';
  });

  /** A PENDING transaction whose expiry time has come. */
  const isDue = (transaction: T): boolean => transaction.status === 'PENDING' && clock.now() >= transaction.expiresAt;

  const expireIfDue = (transaction: T): T =>
    isDue(transaction) ? finish(transaction, 'FAILURE', 'EXPIRED', transaction.expiresAt) : transaction;

  /**
   * Moves a PENDING transaction to a final status and sends the webhook; what follows from it (its
   * expiry timer cancelled, the partner's count of pending ones, retention) is the observer's below.
   */
  function finish(transaction: T, status: FinalStatus, failureReason?: T['failureReason'], at: number = clock.now()): T {
    return settle(transaction, status, failureReason, at);
  }

  /** {@link finish}, also for the expiry timer firing. */
  function settle(transaction: T, status: FinalStatus, failureReason: T['failureReason'] | undefined, at: number): T {
    const updated = settings.copy(transaction);
    updated.status = status;
    updated.updatedAt = at;
    if (status === 'FAILURE' && failureReason !== undefined) updated.failureReason = failureReason;
    const id = idOf(updated);
    // Its object fields are those of the frozen record it copies: frozen at once, the store has nothing to walk.
    collection.set(id, Object.freeze(updated));
    send('transactionStatus', settings.webhookPayload(id, status, partnerKey(config, updated.partnerId)), { transactionId: id, owner: updated.partnerId });
    settings.onFinal?.(updated);
    return updated;
  }

  /** The transaction (of this partner, when one is given), after applying an expiry that is due. */
  function find(id: string, partner?: { id: string }): T | undefined {
    const transaction = collection.get(id);
    if (transaction === undefined || (partner !== undefined && transaction.partnerId !== partner.id)) return undefined;
    return expireIfDue(transaction);
  }

  /** The expiry timer of every transaction: one function, called with the transaction's id. */
  const expire = (id: string): void => {
    expiries.delete(id);
    const current = collection.get(id);
    // The timer is the one firing: settled without looking it up again.
    if (current !== undefined && isDue(current)) settle(current, 'FAILURE', 'EXPIRED', current.expiresAt);
  };

  /**
   * Whether a new PENDING transaction of this partner, keeping `bytes` of notes, fits the memory
   * budget: undefined when it does (call {@link start} next, without an await in between: the
   * bytes are held when the record is stored), else the 429 `TOO_MANY_REQUESTS` to answer.
   */
  const retryAfter = String(Math.ceil(settings.expiryMs / 1000));
  const refuse = (text: string): ErrorReply => ({ ...ctx.errors.error(429, 'TOO_MANY_REQUESTS', text), headers: { 'Retry-After': retryAfter } });
  function admit(partnerId: string, bytes: number): ErrorReply | undefined {
    const cap = config.limits.pendingPerPartner;
    if ((pendingCount.get(partnerId) ?? 0) >= cap) {
      return refuse(
        `The sandbox holds ${cap} PENDING ${settings.label}s of this partner, its limit (--max-pending-per-partner, ` +
          `PAYLATER_MAX_PENDING_PER_PARTNER). Finish some (POST /sandbox/${ctx.family}/transactions/{${settings.pathParam}}/confirm, ` +
          `cancel or fail) or let them expire (at most ${retryAfter} s, or advance the clock), then try again.`,
      );
    }
    if (!retention.admits(bytes)) {
      return refuse(
        `The notes of the PENDING transactions and this one would pass the sandbox's notes budget of ${config.limits.notesBytes} bytes ` +
          `(their JSON text; --max-notes-bytes, PAYLATER_MAX_NOTES_BYTES). Send smaller notes, or finish pending transactions first.`,
      );
    }
    return undefined;
  }

  // Amounts that look like rupees are logged, the first few only: the log stays bounded.
  let rupeeWarnings = 0;

  /** Stores a new PENDING transaction, admitted by {@link admit} (the observer schedules its expiry). */
  function start(transaction: T): void {
    const id = idOf(transaction);
    const warning = rupeeWarnings < MAX_RUPEE_WARNINGS ? rupeeLookingWarning(`${settings.label} '${id}'`, transaction.amount) : undefined;
    if (warning !== undefined) {
      rupeeWarnings += 1;
      ctx.log.warn(rupeeWarnings === MAX_RUPEE_WARNINGS ? `${warning} (Further such amounts are not reported.)` : warning);
    }
    collection.set(id, transaction);
  }

  // What this family derives from its records, kept here only (store.ts `observe`): told of every
  // change, its own writes, the records a shared sandbox reads at start, and a change put back.
  // The expiry timer, the count and the notes' bytes of a PENDING one; the retention queue of a
  // final one.
  ctx.store.observe<T>(settings.collectionName, (id, value, previous) => {
    const wasPending = previous?.status === 'PENDING';
    const isPending = value?.status === 'PENDING';
    if (wasPending && !isPending) {
      expiries.get(id)?.cancel();
      expiries.delete(id);
      const left = (pendingCount.get(previous.partnerId) ?? 1) - 1;
      if (left > 0) pendingCount.set(previous.partnerId, left);
      else pendingCount.delete(previous.partnerId);
      if (value === undefined) retention.release(bytesOf(previous));
    }
    if (value === undefined) return;
    if (isPending && !wasPending) {
      retention.hold(bytesOf(value));
      pendingCount.set(value.partnerId, (pendingCount.get(value.partnerId) ?? 0) + 1);
      expiries.set(id, clock.schedule(value.expiresAt, expire, id));
    } else if (!isPending && (previous === undefined || wasPending)) {
      if (previous === undefined) retention.hold(bytesOf(value));
      retention.add(ctx.family, id, bytesOf(value));
    }
  });

  /**
   * Registers the user's actions; `answer` gives each family's reply body. `shopperActions` are
   * those a shopper's page calls (the web checkout's Cancel and Return buttons): hosted, they take
   * the page's checkout token instead of a credential, as the page's other endpoints do (access.ts).
   */
  function registerUserActions(answer: (updated: T) => unknown, shopperActions: readonly string[] = []): void {
    for (const [action, status] of Object.entries(USER_ACTIONS)) {
      const shopper = shopperActions.includes(action);
      const path = `/sandbox/${ctx.family}/transactions/{${settings.pathParam}}/${action}`;
      ctx.sandboxRoute('POST', path, (request) => {
        const id = request.params[settings.pathParam] ?? '';
        const transaction = find(id);
        // Hosted, another partner's transaction is answered as one that does not exist, and a
        // shopper's page acts only on the transaction its link names (access.ts).
        if (transaction === undefined) return notFound(id);
        const owner = { partner: transaction.partnerId };
        if (!(shopper ? ctx.access.shopperAllows(request, owner, id) : ctx.access.allows(request, owner))) return notFound(id);
        if (transaction.status !== 'PENDING') {
          return ctx.sandboxErrors.error(
            409,
            'INVALID_STATE',
            `The transaction is already ${transaction.status}${transaction.failureReason === 'EXPIRED' ? ' (expired)' : ''}.`,
          );
        }
        const updated = finish(transaction, status, (status === 'FAILURE' ? 'USER_FAILED' : undefined) as T['failureReason']);
        return { status: 200, body: answer(updated) };
      }, { shopper });
    }
  }

  // An unknown transaction has one code, on the contract's paths and on the sandbox's own.
  const notFound = (id: string) => ctx.sandboxErrors.notFound(`No ${settings.label} with ${settings.pathParam} '${id}'.`, 'NO_SUCH_TRANSACTION');

  return { find, finish, admit, start, registerUserActions, notFound, send: flowSend };
}

/** One refund of a web or SDK transaction. */
export interface DirectRefund {
  amount: number;
  refundedAt: string;
}

/** What the refund rules need of a web or SDK transaction record. */
export interface RefundableRecord extends DirectRecord {
  amount: number;
  refundedAmount: number;
  /** How many refunds there are; each is a child record of its own (see {@link ChildRecords}). */
  refundCount: number;
}

/**
 * The refund rules of the SDK and web flows: only a SUCCESS transaction, `amount` absent or 0
 * refunds everything not refunded yet (a decided reading of "the whole transaction"), and refunds
 * never add up to more than the amount. Writes the refund as a record of its own in `refunds`
 * (earlier refunds are not copied) and answers the updated transaction, which the caller stores
 * without an `await` in between, so that concurrent refunds cannot overspend; or the error reply.
 */
export function refundDirect<T extends RefundableRecord>(
  copy: (transaction: T) => T,
  errors: ErrorHelpers,
  refunds: ChildRecords<DirectRefund>,
  key: string,
  transaction: T,
  amount: number | undefined,
  at: { now: number; iso: string },
): { ok: true; updated: T } | { ok: false; reply: ErrorReply } {
  const fail = (code: ErrorCode, text: string) => ({ ok: false as const, reply: errors.error(400, code, text) });
  if (transaction.status !== 'SUCCESS') {
    return fail(
      'TRANSACTION_NOT_REFUNDABLE',
      `The transaction's status is ${transaction.status}; only a SUCCESS transaction can be refunded.`,
    );
  }
  const remaining = transaction.amount - transaction.refundedAmount;
  if (remaining <= 0) return fail('ALREADY_REFUNDED', `The whole amount of ${paiseAndRupees(transaction.amount)} was already refunded.`);
  const requested = amount === undefined || amount === 0 ? remaining : amount;
  if (requested > remaining) return fail('REFUND_AMOUNT_TOO_LARGE', `Refund of ${paiseAndRupees(requested)} exceeds the remaining ${paiseAndRupees(remaining)}.`);
  refunds.set(key, transaction.refundCount, { amount: requested, refundedAt: at.iso });
  const updated = copy(transaction);
  updated.refundedAmount = transaction.refundedAmount + requested;
  updated.refundCount = transaction.refundCount + 1;
  updated.updatedAt = at.now;
  return { ok: true, updated };
}
