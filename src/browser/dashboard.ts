/**
 * The script of the sandbox's dashboard (`/dashboard`, rendered by src/sandbox/pages/dashboard.ts,
 * which inlines this bundle). Written by hand on the DOM, with no library (D224): four lists and a
 * few forms do not need a framework's runtime, and the page must work offline under a
 * Content-Security-Policy that allows only this origin and this script.
 *
 * Everything comes from the sandbox's own endpoints, so their rules apply to the page too:
 * - Requests: `GET /sandbox/requests` (newest first, with the filters; `after=<latest>` once a
 *   second for new ones),
 *   `GET /sandbox/requests/{id}` for one;
 * - Transactions: the family's sandbox view (`/sandbox/sdk/transactions/{id}`, `/sandbox/web/...`,
 *   the gateway's hosted-page view, the extras user), its deliveries and its requests, merged into
 *   one timeline on the virtual clock;
 * - Webhooks: `GET /sandbox/webhooks/stream` (Server-Sent Events) for each event recorded, then
 *   `GET /sandbox/webhooks/deliveries?transactionId=` for its attempts while it is pending; resend
 *   with `POST /sandbox/webhooks/deliveries/{id}/resend`;
 * - Controls: the sandbox's `POST` endpoints, each shown as the curl line it runs.
 *
 * Reads carry `X-Sandbox-Dashboard: read`, so the request log does not log them; the controls are
 * logged like any call. Every value is written with `textContent`, never as HTML. The page keeps at
 * most {@link MAX_ROWS} requests and {@link MAX_DELIVERIES} deliveries, so it stays fast however
 * much the sandbox holds.
 */

const MAX_ROWS = 200;
const MAX_DELIVERIES = 100;
const MAX_CHIPS = 60;
const POLL_MS = 1000;
const READ: RequestInit = { headers: { 'X-Sandbox-Dashboard': 'read' } };

type Json = Record<string, any>;

/** An entry of `GET /sandbox/requests` (RequestSummary in src/sandbox/request-log.ts). */
type Summary = Json;

interface TransactionRef {
  family: string;
  id: string;
  merchantId: string;
}

// ---------------------------------------------------------------------------------------------
// DOM helpers

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

/** Replaces an element's children, leaving out the absent ones. */
function fill(element: HTMLElement, ...children: (Node | string | null | undefined)[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined));
}

function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function button(text: string, onClick: () => void, attributes: Record<string, string> = {}): HTMLButtonElement {
  const element = h('button', { type: 'button', ...attributes }, text);
  element.addEventListener('click', onClick);
  return element;
}

function pre(text: string, label: string): HTMLPreElement {
  return h('pre', { tabindex: '0', 'aria-label': label }, text);
}

function time(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').replace('Z', '');
}

function rupees(paise: unknown): string {
  return typeof paise === 'number' ? `₹${(paise / 100).toLocaleString('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} (${paise} paise)` : '—';
}

function statusClass(status: number): string {
  return status >= 500 ? 's5' : status >= 400 ? 's4' : 's2';
}

// ---------------------------------------------------------------------------------------------
// Calls

async function read(path: string): Promise<Json> {
  const response = await fetch(path, READ);
  const body = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) throw new Error(`${response.status}: ${String(body.message ?? body.errorCode ?? 'failed')}`);
  return body;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The curl line of a call, as a person would type it. */
function curlLine(method: string, path: string, body?: unknown): string {
  const parts = ['curl -s', ...(method === 'GET' ? [] : ['-X', method]), shellQuote(`${location.origin}${path}`)];
  if (body !== undefined) parts.push("-H 'Content-Type: application/json' -d", shellQuote(JSON.stringify(body)));
  return parts.join(' ');
}

/** Runs a control: the call, its curl line and its answer shown in the result area. */
async function act(method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const result = byId<HTMLDivElement>('control-result');
  const init: RequestInit = { method };
  if (body !== undefined) init.headers = { 'Content-Type': 'application/json' };
  if (body !== undefined) init.body = JSON.stringify(body);
  let answer: Json | undefined;
  let status = 0;
  try {
    const response = await fetch(path, init);
    status = response.status;
    answer = (await response.json().catch(() => undefined)) as Json | undefined;
  } catch (error) {
    answer = { error: String(error) };
  }
  result.replaceChildren(
    h('p', {}, h('strong', { class: statusClass(status) }, `${method} ${path} → ${status || 'no answer'}`)),
    h('p', {}, 'The call: ', h('code', {}, curlLine(method, path, body))),
    pre(JSON.stringify(answer ?? null, null, 2), 'The answer'),
  );
  void pollOnce();
  return status >= 200 && status < 300 ? answer : undefined;
}

// ---------------------------------------------------------------------------------------------
// Requests

const requestState = { latest: 0, cursor: null as string | null, open: '' };

function requestFilters(): Record<string, string> {
  const form = byId<HTMLFormElement>('request-filters');
  const filters: Record<string, string> = {};
  for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value.trim() !== '') filters[name] = value.trim();
  return filters;
}

function requestRow(entry: Summary, fresh: boolean): HTMLTableRowElement {
  const name = entry.operation ?? `${entry.method} ${entry.path}`;
  // The accessible name starts with the visible text (WCAG 2.5.3).
  const open = button(name, () => void openRequest(entry.id), {
    class: 'link',
    'aria-label': `${name}: open request ${entry.requestId} (${entry.method} ${entry.path}, status ${entry.status})`,
  });
  const row = h(
    'tr',
    { 'data-id': entry.id, ...(fresh ? { class: 'new' } : {}) },
    h('td', {}, time(entry.at)),
    h('td', {}, entry.family ?? '—'),
    h('td', {}, open),
    h('td', {}, entry.principal ?? '—'),
    h('td', { class: statusClass(entry.status) }, String(entry.status)),
    h('td', {}, String(entry.durationMs)),
    h('td', {}, h('code', {}, entry.requestId)),
    h('td', {}, entry.reason ?? ''),
  );
  if (fresh) setTimeout(() => row.classList.remove('new'), 3000);
  return row;
}

async function loadRequests(older = false): Promise<void> {
  const filters = requestFilters();
  const query = new URLSearchParams({ limit: '50', ...filters });
  if (older && requestState.cursor !== null) query.set('before', requestState.cursor);
  const note = byId<HTMLParagraphElement>('requests-note');
  let page: Json;
  try {
    page = await read(`/sandbox/requests?${query}`);
  } catch (error) {
    note.textContent = `The requests could not be read: ${String(error)}`;
    return;
  }
  const body = byId<HTMLTableElement>('request-table').tBodies[0]!;
  const rows = (page.requests as Summary[]).map((entry) => requestRow(entry, false));
  if (older) body.append(...rows);
  else body.replaceChildren(...rows);
  if (!older) requestState.latest = page.latest as number;
  requestState.cursor = page.nextCursor as string | null;
  byId<HTMLButtonElement>('requests-older').hidden = requestState.cursor === null;
  for (const entry of page.requests as Summary[]) noteTransaction(entry);
  note.textContent =
    body.rows.length === 0
      ? Object.keys(filters).length > 0
        ? 'No request matches these filters among those the log holds.'
        : 'No request yet: call the sandbox and it shows here.'
      : `${body.rows.length} shown${requestState.cursor === null ? '' : '; older ones below'}.`;
  if (!older && filters.requestId !== undefined && page.requests.length > 0) void openRequest((page.requests as Summary[])[0]!.id);
}

async function openRequest(id: string): Promise<void> {
  const panel = byId<HTMLDivElement>('request-detail');
  requestState.open = id;
  for (const row of byId<HTMLTableElement>('request-table').tBodies[0]!.rows) row.classList.toggle('open', row.dataset.id === id);
  let entry: Json;
  try {
    entry = await read(`/sandbox/requests/${encodeURIComponent(id)}`);
  } catch (error) {
    panel.replaceChildren(h('p', {}, `This request is no longer held: ${String(error)}`));
    panel.hidden = false;
    return;
  }
  const headers = (entry.request.headers as [string, string][]).map(([name, value]) => `${name}: ${value}`).join('\n');
  const answerHeaders = Object.entries(entry.response.headers as Record<string, string>)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const cut = (part: Json) => (part.truncated ? ` (the first bytes of ${part.bytes})` : ` (${part.bytes} bytes)`);
  fill(
    panel,
    h('h3', {}, `${entry.method} ${entry.path} → `, h('span', { class: statusClass(entry.status) }, String(entry.status))),
    h(
      'p',
      {},
      `${time(entry.at)} · ${entry.family ?? 'no family'} · ${entry.operation ?? 'no route'} · ${entry.principal ?? 'no principal'} · ${entry.durationMs} ms · `,
      h('code', {}, entry.requestId),
      entry.transactionId === null
        ? null
        : h('span', {}, ' · ', button(`transaction ${entry.transactionId}`, () => void openTransaction(refOf(entry as Summary)), { class: 'link' })),
    ),
    entry.reason === null ? null : h('p', { class: 's4' }, `Reason: ${entry.reason}`),
    h('h3', {}, 'Request headers'),
    pre(headers, 'Request headers'),
    h('h3', {}, `Request body${cut(entry.request)}`),
    pre(entry.request.body || '(empty)', 'Request body'),
    h('h3', {}, 'Answer headers'),
    pre(answerHeaders, 'Answer headers'),
    h('h3', {}, `Answer body${cut(entry.response)}`),
    pre(entry.response.body || '(not JSON, or empty)', 'Answer body'),
  );
  panel.hidden = false;
  panel.focus();
}

// ---------------------------------------------------------------------------------------------
// Transactions

const seen = new Map<string, TransactionRef>();
let openRef: TransactionRef | undefined;

function refOf(entry: Summary): TransactionRef {
  const merchant = entry.principal?.startsWith('merchant ') ? entry.principal.slice('merchant '.length) : '';
  return { family: entry.family ?? 'sdk', id: entry.transactionId ?? '', merchantId: merchant };
}

function noteTransaction(entry: Summary): void {
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

function statePath(ref: TransactionRef): string {
  const id = encodeURIComponent(ref.id);
  if (ref.family === 'gateway') return `/sandbox/gateway/checkout/${encodeURIComponent(ref.merchantId)}/${id}`;
  if (ref.family === 'extras') return `/sandbox/extras/users/${id}`;
  return `/sandbox/${ref.family}/transactions/${id}`;
}

interface Moment {
  at: string;
  text: string;
}

async function openTransaction(ref: TransactionRef): Promise<void> {
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

async function expire(expiresAt: string): Promise<void> {
  const clock = await read('/sandbox/clock');
  const ms = Math.max(0, Date.parse(expiresAt) - (clock.nowMs as number) + 1000);
  await act('POST', '/sandbox/clock/advance', { ms });
}

// ---------------------------------------------------------------------------------------------
// Webhooks

const deliveriesById = new Map<string, Json>();
const SIGNING_KEYS: Record<string, string> = {
  sdk: "the partner's private key",
  web: "the partner's private key",
  gateway: "the merchant's Transactional API password",
};

function rememberDelivery(delivery: Json): void {
  deliveriesById.set(delivery.id as string, { ...deliveriesById.get(delivery.id as string), ...delivery });
  if (deliveriesById.size > MAX_DELIVERIES) {
    const oldest = [...deliveriesById.values()].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))[0]!;
    deliveriesById.delete(oldest.id as string);
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

function renderDeliveries(): void {
  const list = byId<HTMLDivElement>('delivery-list');
  const sorted = [...deliveriesById.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  if (sorted.length === 0) {
    list.replaceChildren(h('p', { class: 'note' }, 'No webhook yet.'));
    return;
  }
  list.replaceChildren(...sorted.map(deliveryView));
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
    attempts.length === 0
      ? h('p', { class: 'note' }, 'No attempt yet.')
      : h(
          'ol',
          { class: 'attempts', 'aria-label': 'Attempts' },
          ...attempts.map((attempt) =>
            h('li', {}, `${time(attempt.at)} → `, h('strong', { class: attempt.statusCode !== undefined && attempt.statusCode < 400 ? 's2' : 's4' }, attempt.statusCode === undefined ? String(attempt.error) : `HTTP ${attempt.statusCode}`), ` (${attempt.durationMs} ms)`),
          ),
        ),
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

async function refreshPendingDeliveries(): Promise<void> {
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

async function loadDeliveries(query: string): Promise<void> {
  const page = await read(`/sandbox/webhooks/deliveries?${query}`).catch(() => undefined);
  for (const delivery of (page?.deliveries ?? []) as Json[]) rememberDelivery(delivery);
}

// ---------------------------------------------------------------------------------------------
// Controls

function field(label: string, input: HTMLInputElement | HTMLSelectElement): HTMLLabelElement {
  return h('label', {}, `${label} `, input);
}

function controlPanel(): void {
  const panel = byId<HTMLDivElement>('control-panel');

  const ms = h('input', { type: 'number', min: '0', step: '1000', value: '60000', size: '10' });
  const advanceCode = h('code');
  const advanceBody = () => ({ ms: Number(ms.value) });
  const showAdvance = () => (advanceCode.textContent = curlLine('POST', '/sandbox/clock/advance', advanceBody()));
  ms.addEventListener('input', showAdvance);
  showAdvance();

  const family = h('select', {}, h('option', {}, 'sdk'), h('option', {}, 'web'));
  const id = h('input', { size: '22' });
  const actionCodes = ['confirm', 'fail', 'cancel'].map((action) => [action, h('code')] as const);
  const showActions = () => {
    for (const [action, code] of actionCodes) code.textContent = curlLine('POST', `/sandbox/${family.value}/transactions/${id.value === '' ? '<id>' : encodeURIComponent(id.value)}/${action}`);
  };
  family.addEventListener('change', showActions);
  id.addEventListener('input', showActions);
  showActions();

  const expireFamily = h('select', {}, h('option', {}, 'sdk'), h('option', {}, 'web'), h('option', {}, 'gateway'));
  const expireId = h('input', { size: '22' });
  const expireMerchant = h('input', { size: '14' });

  const merchant = h('input', { size: '16' });
  const outcome = h('select', {}, h('option', { value: '' }, 'by the rule (Reject in the name fails)'), h('option', {}, 'pass'), h('option', {}, 'reject'));
  const verifyCode = h('code');
  const verifyBody = () => (outcome.value === '' ? undefined : { outcome: outcome.value });
  const verifyPath = () => `/sandbox/gateway/merchants/${merchant.value === '' ? '<id>' : encodeURIComponent(merchant.value)}/verify`;
  const showVerify = () => (verifyCode.textContent = curlLine('POST', verifyPath(), verifyBody()));
  merchant.addEventListener('input', showVerify);
  outcome.addEventListener('change', showVerify);
  showVerify();

  panel.replaceChildren(
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-clock' },
      h('h3', { id: 'control-clock' }, 'Advance the clock'),
      field('Milliseconds', ms),
      button('Advance', () => void act('POST', '/sandbox/clock/advance', advanceBody())),
      ...[
        ['1 min', 60_000],
        ['15 min', 900_000],
        ['1 h', 3_600_000],
      ].map(([label, value]) => button(`+${label}`, () => void act('POST', '/sandbox/clock/advance', { ms: value }))),
      h('br'),
      advanceCode,
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-user' },
      h('h3', { id: 'control-user' }, "A pending transaction: the user's answer"),
      field('Flow', family),
      field('Transaction id', id),
      h('br'),
      ...actionCodes.flatMap(([action, code]) => [
        button(action[0]!.toUpperCase() + action.slice(1), () => void act('POST', `/sandbox/${family.value}/transactions/${encodeURIComponent(id.value)}/${action}`)),
        code,
        h('br'),
      ]),
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-expire' },
      h('h3', { id: 'control-expire' }, 'Expire a pending transaction (advances the clock past its expiry)'),
      field('Family', expireFamily),
      field('Transaction id', expireId),
      field('Merchant (gateway)', expireMerchant),
      button('Expire', () => {
        const ref = { family: expireFamily.value, id: expireId.value, merchantId: expireMerchant.value };
        void read(statePath(ref)).then(
          (state) => expire(((state.transaction ?? state) as Json).expiresAt as string),
          (error: unknown) => (byId<HTMLDivElement>('control-result').textContent = `Not found: ${String(error)}`),
        );
      }),
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-verify' },
      h('h3', { id: 'control-verify' }, 'Verify a merchant now'),
      field('Merchant id', merchant),
      field('Outcome', outcome),
      button('Verify', () => void act('POST', verifyPath(), verifyBody())),
      h('br'),
      verifyCode,
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Live

let polling = false;
async function pollOnce(): Promise<void> {
  if (polling) return;
  polling = true;
  try {
    const clock = await read('/sandbox/clock').catch(() => undefined);
    if (clock !== undefined) byId<HTMLOutputElement>('clock').textContent = time(clock.now as string);
    // The newer requests that pass the filters shown (the log applies them, as for the first page).
    const query = new URLSearchParams({ after: String(requestState.latest), limit: String(MAX_ROWS), ...requestFilters() });
    const page = await read(`/sandbox/requests?${query}`).catch(() => undefined);
    const fresh = (page?.requests ?? []) as Summary[];
    if (page !== undefined) requestState.latest = page.latest as number;
    if (fresh.length > 0) {
      const body = byId<HTMLTableElement>('request-table').tBodies[0]!;
      body.prepend(...fresh.map((entry) => requestRow(entry, true)));
      while (body.rows.length > MAX_ROWS) body.lastElementChild!.remove();
      for (const entry of fresh) noteTransaction(entry);
      byId<HTMLParagraphElement>('requests-note').textContent = `${body.rows.length} shown.`;
    }
    const touched = fresh.some((entry) => entry.transactionId === openRef?.id || entry.path.startsWith('/sandbox/clock/advance') || entry.method === 'POST');
    await refreshPendingDeliveries();
    if (openRef !== undefined && (touched || hasPending())) await openTransaction(openRef);
  } finally {
    polling = false;
  }
}

function hasPending(): boolean {
  for (const delivery of deliveriesById.values()) if (delivery.status === 'pending') return true;
  return false;
}

function follow(): void {
  const live = byId<HTMLSpanElement>('live');
  const stream = new EventSource('/sandbox/webhooks/stream');
  stream.addEventListener('open', () => (live.textContent = 'live'));
  stream.addEventListener('error', () => (live.textContent = 'reconnecting…'));
  stream.addEventListener('delivery', (event) => {
    rememberDelivery(JSON.parse((event as MessageEvent<string>).data) as Json);
  });
  setInterval(() => void pollOnce(), POLL_MS);
}

function start(): void {
  const filters = byId<HTMLFormElement>('request-filters');
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    void loadRequests();
  });
  filters.addEventListener('reset', () => setTimeout(() => void loadRequests(), 0));
  byId<HTMLButtonElement>('requests-older').addEventListener('click', () => void loadRequests(true));
  byId<HTMLFormElement>('transaction-open').addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(event.target as HTMLFormElement);
    void openTransaction({ family: String(data.get('family')), id: String(data.get('id')).trim(), merchantId: String(data.get('merchantId') ?? '').trim() });
  });
  byId<HTMLButtonElement>('webhooks-oldest').addEventListener('click', () => void loadDeliveries('limit=100'));
  controlPanel();
  renderDeliveries();
  void loadRequests();
  void loadDeliveries('status=pending&limit=100');
  follow();
  void pollOnce();
}

start();
