/**
 * The dashboard's transactions (see ../dashboard.ts): those seen in the requests, listed as chips,
 * and one opened: the family's sandbox view (`/sandbox/sdk/transactions/{id}`, `/sandbox/web/...`,
 * the gateway's hosted-page view, the extras user), its deliveries and its requests, merged into
 * one timeline on the virtual clock, with the controls of a pending one.
 */
import { act, curlLine, read } from './calls.js';
import { button, byId, fill, h, pre, rupees, time, type Json } from './dom.js';
import { rememberDelivery } from './webhooks.js';

const MAX_CHIPS = 60;

/** An entry of `GET /sandbox/requests` (RequestSummary of the sandbox's request log). */
export type Summary = Json;

export interface TransactionRef {
  family: string;
  id: string;
  merchantId: string;
}

const seen = new Map<string, TransactionRef>();
let openRef: TransactionRef | undefined;

/** The transaction shown, if any. */
export function openTransactionRef(): TransactionRef | undefined {
  return openRef;
}

export function refOf(entry: Summary): TransactionRef {
  const merchant = entry.principal?.startsWith('merchant ') ? entry.principal.slice('merchant '.length) : '';
  return { family: entry.family ?? 'sdk', id: entry.transactionId ?? '', merchantId: merchant };
}

export function noteTransaction(entry: Summary): void {
  if (entry.transactionId === null || !['sdk', 'web', 'gateway'].includes(entry.family ?? '')) return;
  const ref = refOf(entry);
  if (ref.family === 'gateway' && ref.merchantId === '') return;
  const key = `${ref.family} ${ref.merchantId} ${ref.id}`;
  if (seen.has(key)) return;
  seen.set(key, ref);
  const list = byId<HTMLUListElement>('transaction-list');
  list.prepend(h('li', {}, button(`${ref.family} ${ref.id}`, () => void openTransaction(ref), { class: 'link' })));
  while (list.children.length > MAX_CHIPS) list.lastElementChild!.remove();
  if (seen.size > MAX_CHIPS * 4) seen.delete(seen.keys().next().value!);
}

export function statePath(ref: TransactionRef): string {
  const id = encodeURIComponent(ref.id);
  if (ref.family === 'gateway') return `/sandbox/gateway/checkout/${encodeURIComponent(ref.merchantId)}/${id}`;
  if (ref.family === 'extras') return `/sandbox/extras/users/${id}`;
  return `/sandbox/${ref.family}/transactions/${id}`;
}

interface Moment {
  at: string;
  text: string;
}

export async function openTransaction(ref: TransactionRef): Promise<void> {
  openRef = ref;
  const panel = byId<HTMLDivElement>('transaction-detail');
  const id = encodeURIComponent(ref.id);
  const [state, deliveries, requests] = await Promise.all([
    read(statePath(ref)).catch((error: unknown) => ({ problem: String(error) })),
    ref.family === 'extras' ? Promise.resolve({ deliveries: [] }) : read(`/sandbox/webhooks/deliveries?transactionId=${id}&family=${ref.family}&limit=100`).catch(() => ({ deliveries: [] })),
    read(`/sandbox/requests?transactionId=${id}&limit=100`).catch(() => ({ requests: [] })),
  ]);
  if (openRef !== ref) return;
  const record = ((state as Json).transaction ?? state) as Json;
  const moments: Moment[] = [];
  if (typeof record.createdAt === 'string') moments.push({ at: record.createdAt, text: `created (${ref.family})` });
  for (const refund of (record.refunds ?? []) as Json[]) {
    if (typeof refund.createdAt === 'string') moments.push({ at: refund.createdAt, text: `refund ${refund.id ?? ''} of ${rupees(refund.amount)}: ${refund.status ?? ''}` });
  }
  if (typeof record.updatedAt === 'string' && record.status !== 'PENDING') moments.push({ at: record.updatedAt, text: `became ${record.status}${record.failureReason ? ` (${record.failureReason})` : ''}` });
  for (const entry of (requests.requests ?? []) as Summary[]) {
    moments.push({ at: entry.at, text: `request ${entry.method} ${entry.path} → ${entry.status}${entry.reason ? `: ${entry.reason}` : ''} (${entry.requestId})` });
  }
  for (const delivery of (deliveries.deliveries ?? []) as Json[]) {
    rememberDelivery(delivery);
    moments.push({ at: delivery.createdAt, text: `webhook ${delivery.event} recorded (${delivery.status})` });
    for (const attempt of delivery.attempts as Json[]) {
      moments.push({ at: attempt.at, text: `webhook ${delivery.event} attempt ${attempt.attempt} → ${attempt.statusCode ?? attempt.error}` });
    }
  }
  moments.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const facts: [string, string][] = [
    ['Status', String(record.status ?? (state.problem as string | undefined) ?? '—')],
    ['Failure reason', String(record.failureReason ?? '—')],
    ['Amount', rupees(record.amount)],
    ['Refunded', rupees(record.refundedAmount)],
    ['Created', time(record.createdAt)],
    ['Updated', time(record.updatedAt)],
    ['Expires', time(record.expiresAt)],
  ];
  const pending = record.status === 'PENDING';
  fill(
    panel,
    h('h3', {}, `${ref.family} transaction ${ref.id}${ref.merchantId ? ` of merchant ${ref.merchantId}` : ''}`),
    h('dl', { class: 'facts' }, ...facts.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)])),
    pending ? transactionControls(ref, record) : null,
    h('h3', {}, 'Timeline (virtual clock)'),
    h('ol', { class: 'timeline', 'aria-label': 'Timeline' }, ...moments.map((moment) => h('li', {}, h('time', {}, time(moment.at)), ' ', moment.text))),
    h('details', {}, h('summary', {}, 'The view as the sandbox answers it'), pre(JSON.stringify(state, null, 2), 'The transaction as answered')),
  );
  panel.hidden = false;
}

function transactionControls(ref: TransactionRef, record: Json): HTMLElement {
  const box = h('div', { class: 'control' });
  const id = encodeURIComponent(ref.id);
  if (ref.family === 'sdk' || ref.family === 'web') {
    for (const action of ['confirm', 'fail', 'cancel']) {
      const path = `/sandbox/${ref.family}/transactions/${id}/${action}`;
      box.append(button(action[0]!.toUpperCase() + action.slice(1), () => void act('POST', path)), h('code', {}, curlLine('POST', path)), h('br'));
    }
  }
  if (ref.family === 'gateway') {
    const path = `/sandbox/gateway/checkout/${encodeURIComponent(ref.merchantId)}/${id}/cancel`;
    box.append(button('Cancel (the shopper, on its page)', () => void act('POST', path)), h('code', {}, curlLine('POST', path)), h('br'));
  }
  if (typeof record.expiresAt === 'string') {
    box.append(button('Expire (advance the clock past its expiry)', () => void expire(record.expiresAt as string)));
  }
  return box;
}

export async function expire(expiresAt: string): Promise<void> {
  const clock = await read('/sandbox/clock');
  const ms = Math.max(0, Date.parse(expiresAt) - (clock.nowMs as number) + 1000);
  await act('POST', '/sandbox/clock/advance', { ms });
}
