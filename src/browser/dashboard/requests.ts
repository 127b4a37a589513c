/**
 * The dashboard's requests (see ../dashboard.ts): `GET /sandbox/requests` newest first with the
 * filters of the form, older ones by the cursor, newer ones by `after=<latest>` (the live poll),
 * and one request opened with `GET /sandbox/requests/{id}`. The table keeps {@link MAX_ROWS} rows.
 */
import { read } from './calls.js';
import { button, byId, fill, h, pre, statusClass, time, type Json } from './dom.js';
import { noteTransaction, openTransaction, refOf, type Summary } from './transactions.js';

const MAX_ROWS = 200;

const requestState = { latest: 0, cursor: null as string | null };

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

export async function loadRequests(older = false): Promise<void> {
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

/** Adds the requests newer than those shown (that pass the filters); answers them. */
export async function pollRequests(): Promise<Summary[]> {
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
  return fresh;
}

async function openRequest(id: string): Promise<void> {
  const panel = byId<HTMLDivElement>('request-detail');
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
