/**
 * The script of the sandbox's dashboard (`/dashboard`, rendered by src/sandbox/pages/dashboard.ts,
 * which inlines this bundle). Written by hand on the DOM, with no library (D224): four lists and a
 * few forms do not need a framework's runtime, and the page must work offline under a
 * Content-Security-Policy that allows only this origin and this script. One module per part of
 * the page, under dashboard/:
 *
 * - access.ts: the sign-in of a hosted sandbox, calls.ts: the calls and the credential they carry;
 * - requests.ts: `GET /sandbox/requests` (newest first, with the filters) and one request;
 * - transactions.ts: a transaction's view, deliveries and requests merged into one timeline;
 * - webhooks.ts: the deliveries newest first, their attempts, resend;
 * - controls.ts: the sandbox's `POST` endpoints, each shown as the curl line it runs;
 * - here: the start and the live part: the stream of webhooks (`GET /sandbox/webhooks/stream`),
 *   and once a second the clock, the newer requests, the attempts of pending deliveries and the
 *   open transaction.
 *
 * Reads carry `X-Sandbox-Dashboard: read`, so the request log does not log them; the controls are
 * logged like any call. Everything comes from the sandbox's own endpoints, so their rules apply to
 * the page too. The page keeps at most 200 requests and 200 deliveries, so it stays fast however
 * much the sandbox holds.
 */
import { signedIn } from './dashboard/access.js';
import { followStream, hooks, read } from './dashboard/calls.js';
import { controlPanel } from './dashboard/controls.js';
import { byId, time } from './dashboard/dom.js';
import { loadRequests, pollRequests } from './dashboard/requests.js';
import { openTransaction, openTransactionRef } from './dashboard/transactions.js';
import { hasPendingDelivery, loadDeliveries, refreshPendingDeliveries, rememberDelivery, renderDeliveries } from './dashboard/webhooks.js';

const POLL_MS = 1000;

let polling = false;
async function pollOnce(): Promise<void> {
  if (polling) return;
  polling = true;
  try {
    const clock = await read('/sandbox/clock').catch(() => undefined);
    if (clock !== undefined) byId<HTMLOutputElement>('clock').textContent = time(clock.now as string);
    const fresh = await pollRequests();
    const openRef = openTransactionRef();
    const touched = fresh.some((entry) => entry.transactionId === openRef?.id || entry.path.startsWith('/sandbox/clock/advance') || entry.method === 'POST');
    await refreshPendingDeliveries();
    if (openRef !== undefined && (touched || hasPendingDelivery())) await openTransaction(openRef);
  } finally {
    polling = false;
  }
}

async function start(): Promise<void> {
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
  byId<HTMLButtonElement>('webhooks-older').addEventListener('click', () => void loadDeliveries(true));
  hooks.afterAct = () => void pollOnce();
  renderDeliveries();
  await signedIn();
  // After the sign-in: its curl lines name the credential.
  controlPanel();
  void loadRequests();
  void loadDeliveries();
  const live = byId<HTMLSpanElement>('live');
  followStream(rememberDelivery, (state) => (live.textContent = state));
  setInterval(() => void pollOnce(), POLL_MS);
  void pollOnce();
}

void start();
