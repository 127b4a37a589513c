/**
 * The dashboard's webhooks (see ../dashboard.ts): the newest deliveries first
 * (`GET /sandbox/webhooks/deliveries?order=newest`), older ones a page at a time, each new one as
 * the live stream tells it, and the attempts of the pending ones read again while they are
 * pending. Each delivery shows every attempt (time, the receiver's status or the error, the start
 * of its answer), the next attempt due, the body and the signature the receiver computes, and
 * Resend (`POST /sandbox/webhooks/deliveries/{id}/resend`). At most {@link MAX_DELIVERIES} are kept.
 */
import { act, curlLine, read } from './calls.js';
import { button, byId, h, pre, time, type Json } from './dom.js';

const MAX_DELIVERIES = 200;
const PAGE = 50;

const deliveriesById = new Map<string, Json>();
let olderCursor: string | null = null;

const SIGNING_KEYS: Record<string, string> = {
  sdk: "the partner's private key",
  web: "the partner's private key",
  gateway: "the merchant's Transactional API password",
};

export function rememberDelivery(delivery: Json): void {
  deliveriesById.set(delivery.id as string, { ...deliveriesById.get(delivery.id as string), ...delivery });
  if (deliveriesById.size > MAX_DELIVERIES) {
    let oldest: Json | undefined;
    for (const candidate of deliveriesById.values()) if (oldest === undefined || Date.parse(candidate.createdAt) < Date.parse(oldest.createdAt)) oldest = candidate;
    deliveriesById.delete(oldest!.id as string);
  }
  scheduleRender();
}

let renderQueued = false;
function scheduleRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderDeliveries();
  });
}

export function renderDeliveries(): void {
  const list = byId<HTMLDivElement>('delivery-list');
  const sorted = [...deliveriesById.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  if (sorted.length === 0) {
    list.replaceChildren(h('p', { class: 'note' }, 'No webhook yet.'));
    return;
  }
  list.replaceChildren(...sorted.map(deliveryView));
}

function attemptView(attempt: Json): HTMLLIElement {
  const answered = attempt.statusCode !== undefined;
  return h(
    'li',
    {},
    `${time(attempt.at)} → `,
    h('strong', { class: answered && attempt.statusCode < 400 ? 's2' : 's4' }, answered ? `HTTP ${attempt.statusCode}` : String(attempt.error)),
    ` (${attempt.durationMs} ms)`,
    typeof attempt.answer === 'string'
      ? h('span', { class: 'answer' }, ' · answered ', h('code', {}, attempt.answer), attempt.answerTruncated === true ? ' … (the first 256 bytes)' : '')
      : answered
        ? ' · an empty answer'
        : '',
  );
}

function deliveryView(delivery: Json): HTMLElement {
  const attempts = (delivery.attempts ?? []) as Json[];
  const headers = (delivery.headers ?? {}) as Record<string, string>;
  const resendPath = `/sandbox/webhooks/deliveries/${encodeURIComponent(delivery.id as string)}/resend`;
  const key = SIGNING_KEYS[delivery.family as string] ?? 'the key';
  const form = headers['Content-Type'] === 'application/x-www-form-urlencoded';
  return h(
    'article',
    { class: 'delivery', 'data-id': delivery.id as string, 'aria-label': `Webhook ${delivery.event} of ${delivery.transactionId ?? 'no transaction'}` },
    h(
      'h3',
      {},
      `${delivery.event} · ${delivery.family} · ${delivery.transactionId ?? '—'} · `,
      h('span', { class: delivery.status === 'delivered' ? 's2' : delivery.status === 'pending' ? '' : 's4', 'data-status': '' }, String(delivery.status)),
    ),
    h(
      'p',
      {},
      `Recorded ${time(delivery.createdAt)} · receiver ${delivery.url ?? (delivery.status === 'not_sent' ? 'none' : '…')} · next attempt due ${time(delivery.nextAttemptAt)}`,
      delivery.reason ? ` · ${delivery.reason}` : '',
    ),
    attempts.length === 0 ? h('p', { class: 'note' }, 'No attempt yet.') : h('ol', { class: 'attempts', 'aria-label': 'Attempts' }, ...attempts.map(attemptView)),
    h(
      'details',
      {},
      h('summary', {}, 'Body and the signature the receiver computes'),
      pre(String(delivery.body ?? ''), 'The body, as signed'),
      h('p', {}, 'X-Signature: ', h('code', {}, headers['X-Signature'] ?? '(none)'), ' · X-Event-Id: ', h('code', {}, headers['X-Event-Id'] ?? String(delivery.eventId))),
      h(
        'p',
        {},
        `The receiver computes base64(SHA-256(${form ? 'the form body' : 'the raw body'} + ${key})) and compares it with X-Signature: `,
        h('code', {}, `printf '%s%s' "$BODY" "$KEY" | openssl dgst -sha256 -binary | base64`),
      ),
    ),
    delivery.url === null && delivery.status === 'not_sent' ? null : h('p', {}, button('Resend', () => void resend(resendPath)), ' ', h('code', {}, curlLine('POST', resendPath))),
  );
}

async function resend(path: string): Promise<void> {
  const answer = await act('POST', path);
  if (answer?.delivery !== undefined) rememberDelivery(answer.delivery as Json);
}

/** Reads again the deliveries of (at most 10) transactions with a pending delivery shown. */
export async function refreshPendingDeliveries(): Promise<void> {
  const transactions = new Set<string>();
  for (const delivery of deliveriesById.values()) {
    if ((delivery.status === 'pending' || delivery.attempts === undefined) && typeof delivery.transactionId === 'string') transactions.add(delivery.transactionId);
    if (transactions.size >= 10) break;
  }
  await Promise.all(
    [...transactions].map(async (transactionId) => {
      const page = await read(`/sandbox/webhooks/deliveries?transactionId=${encodeURIComponent(transactionId)}&limit=100`).catch(() => undefined);
      for (const delivery of (page?.deliveries ?? []) as Json[]) if (deliveriesById.has(delivery.id as string)) rememberDelivery(delivery);
    }),
  );
}

export function hasPendingDelivery(): boolean {
  for (const delivery of deliveriesById.values()) if (delivery.status === 'pending') return true;
  return false;
}

/** The newest page of deliveries, or (`older`) the page after the last one read. */
export async function loadDeliveries(older = false): Promise<void> {
  const query = new URLSearchParams({ order: 'newest', limit: String(PAGE) });
  if (older && olderCursor !== null) query.set('after', olderCursor);
  const page = await read(`/sandbox/webhooks/deliveries?${query}`).catch(() => undefined);
  if (page === undefined) return;
  for (const delivery of (page.deliveries ?? []) as Json[]) rememberDelivery(delivery);
  olderCursor = page.nextCursor as string | null;
  byId<HTMLButtonElement>('webhooks-older').hidden = olderCursor === null;
}
