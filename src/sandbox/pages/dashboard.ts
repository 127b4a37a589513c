/**
 * The dashboard (docs/sandbox.md, "The dashboard"): `GET /dashboard`, one page that shows what
 * the sandbox did, live: the requests it answered, the transactions of the families with their
 * timelines, the webhook deliveries with every attempt, and the sandbox's controls, each with the
 * curl line of the call it makes. Its behaviour is the page script src/browser/dashboard.ts,
 * inlined with a nonce under the pages' Content-Security-Policy (html.ts: this origin only).
 *
 * The page reads everything through the sandbox's own endpoints, so the rules that apply to them
 * apply to the page. This module adds the request log's endpoints (request-log.ts):
 *
 *   GET /sandbox/requests[?limit=1..500&before=<nextCursor>&after=<latest>&family=&status=&requestId=&transactionId=]
 *       {requests: [...], nextCursor, latest}: newest first
 *   GET /sandbox/requests/{id}   one request with its headers and bodies, secrets redacted
 *
 * Who may read them is decided in one place, {@link requestLogAccess}.
 */
import type { SandboxAccess } from '../access.js';
import { loadBrowserAsset } from '../browser-assets.js';
import type { SandboxMethod } from '../context.js';
import type { ErrorHelpers } from '../errors.js';
import { DEFAULT_REQUEST_PAGE, MAX_REQUEST_PAGE, type RequestLog, type RequestQuery } from '../request-log.js';
import { RequestError, type Reply, type SandboxHandler, type SandboxRequest } from '../router.js';
import { escapeHtml, htmlReply, inlineScript, newNonce, pageHead } from './html.js';

/** The families a request may belong to in the filter: the contract's, `sandbox`, `none` (no route). */
const REQUEST_FAMILIES = ['sdk', 'web', 'extras', 'gateway', 'sandbox', 'none'] as const;
const STATUS_FILTER = /^[1-5](?:[0-9]{2}|xx)$/;

/**
 * Who may read the request log, and which entries: the one access rule of the dashboard's own
 * endpoints, the hosted mode's (access.ts). On loopback every request acts as the operator
 * and sees every request. Hosted, the sandbox route has already identified the caller (or answered
 * 401); the operator sees everything, a partner the requests signed as it, a merchant the requests
 * made with its Transactional API credentials, the gateway every merchant's, and the extras client
 * none (its requests name no partner or merchant).
 */
function requestLogAccess(request: SandboxRequest, access: SandboxAccess): RequestQuery['visible'] {
  const tenant = access.tenant(request);
  switch (tenant.kind) {
    case 'operator':
      return undefined;
    case 'partner':
      return (principal) => principal === `partner ${tenant.id}`;
    case 'merchant':
      return (principal) => principal === `merchant ${tenant.id}`;
    case 'gateway':
      return (principal) => principal?.startsWith('merchant ') === true;
    case 'extras':
      return () => false;
  }
}

export interface DashboardContext {
  sandboxRoute(method: SandboxMethod, path: string, handler: SandboxHandler): void;
  pageRoute(path: string, handler: SandboxHandler): void;
  requestLog: RequestLog | undefined;
  errors: ErrorHelpers;
  access: SandboxAccess;
}

export function registerDashboard(ctx: DashboardContext): void {
  const { errors, requestLog } = ctx;
  const bad = (field: string, text: string): never => {
    throw new RequestError(errors.badRequest(text, [{ field, issue: 'is not valid' }]));
  };
  const logOf = (): RequestLog => {
    if (requestLog === undefined) {
      throw new RequestError(
        errors.notFound('The request log is off in this sandbox (createSandbox({ requestLog: false })); start it without that option to see requests.'),
      );
    }
    return requestLog;
  };

  ctx.sandboxRoute('GET', '/sandbox/requests', (request) => {
    const log = logOf();
    const visible = requestLogAccess(request, ctx.access);
    const query = request.query;
    for (const name of ['limit', 'before', 'after', 'family', 'status', 'requestId', 'transactionId']) {
      if (query.getAll(name).length > 1) bad(name, `${name} may be given once.`);
    }
    const number = (name: string, min: number, max: number, hint: string): number | undefined => {
      const raw = query.get(name);
      if (raw === null) return undefined;
      const value = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(value >= min && value <= max)) bad(name, `${name} must be ${hint}.`);
      return value;
    };
    const limit = number('limit', 1, MAX_REQUEST_PAGE, `a whole number from 1 to ${MAX_REQUEST_PAGE} (default ${DEFAULT_REQUEST_PAGE})`);
    const before = number('before', 1, Number.MAX_SAFE_INTEGER, 'the nextCursor of the previous page, unchanged');
    const after = number('after', 0, Number.MAX_SAFE_INTEGER, 'the latest of an earlier page, unchanged');
    if (before !== undefined && after !== undefined) bad('after', 'Give before (older requests) or after (newer ones), not both.');
    const family = query.get('family') ?? undefined;
    if (family !== undefined && !(REQUEST_FAMILIES as readonly string[]).includes(family)) {
      bad('family', `family must be one of ${REQUEST_FAMILIES.join(', ')}.`);
    }
    const status = query.get('status') ?? undefined;
    if (status !== undefined && !STATUS_FILTER.test(status)) bad('status', 'status must be an HTTP status (401) or a class of them (4xx).');
    const page = log.page({
      limit,
      before,
      after,
      family,
      status,
      requestId: query.get('requestId') ?? undefined,
      transactionId: query.get('transactionId') ?? undefined,
      visible,
    });
    return { status: 200, body: page };
  });

  ctx.sandboxRoute('GET', '/sandbox/requests/{id}', (request) => {
    const log = logOf();
    const visible = requestLogAccess(request, ctx.access);
    const id = request.params.id ?? '';
    const found = log.get(id, visible);
    if (found === undefined) {
      return errors.notFound(
        `No request ${/^rq_[0-9]{1,15}$/.test(id) ? id : 'with that id'} in the log: ids are the "id" of GET /sandbox/requests (rq_<n>), and the oldest requests are forgotten beyond --max-request-log-bytes.`,
      );
    }
    return { status: 200, body: found };
  });

  ctx.pageRoute('/dashboard', async () => {
    const script = await loadBrowserAsset('dashboard');
    if (!script.ok) return errors.error(500, 'INTERNAL_SERVER_ERROR', script.problem);
    return dashboardPage(script.code);
  });
}

function dashboardPage(script: string): Reply {
  const nonce = newNonce();
  const html = `${pageHead('Dashboard · Pay-later sandbox', nonce, STYLE)}
<a class="skip" href="#requests">Skip to the requests</a>
<header>
<h1>Pay-later sandbox <span class="sub">dashboard</span></h1>
<p class="clock">Virtual time: <output id="clock" aria-live="off">…</output> · <span id="live" role="status">connecting…</span><span id="who"></span></p>
<nav aria-label="Sections"><a href="#requests">Requests</a> <a href="#transactions">Transactions</a> <a href="#webhooks">Webhooks</a> <a href="#controls">Controls</a> <a href="/">Landing page</a></nav>
</header>
<main>
<section id="access" aria-labelledby="access-title" hidden>
<h2 id="access-title">Sign in to this hosted sandbox</h2>
<p class="note">This sandbox is hosted: a partner or merchant sees only its own requests, transactions and webhooks, the operator everything. The credential stays in this page (a reload asks again); a partner's private key is not sent: the page signs each call with it, as the web flow signs a request.</p>
<form id="access-form" class="filters">
<fieldset><legend>As</legend>
<label><input type="radio" name="kind" value="partner" checked> a partner (web and SDK flows)</label>
<label><input type="radio" name="kind" value="basic"> a merchant, the gateway or the extras client (HTTP Basic)</label>
<label><input type="radio" name="kind" value="operator"> the operator</label>
</fieldset>
<p><label>Partner id <input name="partnerId" size="20" autocomplete="off"></label>
<label>Private key <input name="privateKey" type="password" size="24" autocomplete="off"></label></p>
<p><label>Username <input name="username" size="20" autocomplete="off"></label>
<label>Password <input name="password" type="password" size="24" autocomplete="off"></label></p>
<p><label>Operator token <input name="token" type="password" size="36" autocomplete="off"></label></p>
<button type="submit">Sign in</button>
<p id="access-note" class="note" role="status"></p>
</form>
</section>
<section id="requests" aria-labelledby="requests-title">
<h2 id="requests-title">Requests</h2>
<form id="request-filters" class="filters">
<label>Family <select name="family"><option value="">all</option>${['sdk', 'web', 'extras', 'gateway', 'sandbox'].map((family) => `<option>${escapeHtml(family)}</option>`).join('')}</select></label>
<label>Status <input name="status" size="5" placeholder="401, 4xx" pattern="[1-5]([0-9]{2}|xx)"></label>
<label>Request id <input name="requestId" size="28" placeholder="req_… from an error"></label>
<label>Transaction <input name="transactionId" size="20"></label>
<button type="submit">Filter</button> <button type="reset">Clear</button>
</form>
<p id="requests-note" class="note" role="status"></p>
<div class="scroll"><table id="request-table"><caption class="sr">The latest requests, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Family</th><th scope="col">Operation</th><th scope="col">Who</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Request id</th><th scope="col">Reason</th></tr></thead>
<tbody></tbody></table></div>
<button type="button" id="requests-older" hidden>Older requests</button>
<div id="request-detail" class="detail" tabindex="-1" hidden></div>
</section>
<section id="transactions" aria-labelledby="transactions-title">
<h2 id="transactions-title">Transactions</h2>
<form id="transaction-open" class="filters">
<label>Family <select name="family"><option>sdk</option><option>web</option><option>gateway</option><option value="extras">extras (a phone number)</option></select></label>
<label>Id <input name="id" size="22" required></label>
<label>Merchant (gateway) <input name="merchantId" size="16"></label>
<button type="submit">Open</button>
</form>
<ul id="transaction-list" class="chips" aria-label="Transactions seen in the requests"></ul>
<div id="transaction-detail" class="detail" tabindex="-1" hidden></div>
</section>
<section id="webhooks" aria-labelledby="webhooks-title">
<h2 id="webhooks-title">Webhooks</h2>
<p class="note">The newest deliveries first, and each one recorded while this page is open; older ones under their transaction, or below.</p>
<div id="delivery-list"></div>
<button type="button" id="webhooks-older" hidden>Older deliveries</button>
</section>
<section id="controls" aria-labelledby="controls-title">
<h2 id="controls-title">Controls</h2>
<div id="control-panel"></div>
<div id="control-result" role="status" class="result"></div>
</section>
</main>
<script nonce="${nonce}">${inlineScript(script)}</script>
</body>
</html>
`;
  return htmlReply(html, { nonce, connect: true });
}

/** The page's style: system fonts, contrast of at least 4.5:1 for text (WCAG AA). */
const STYLE = `
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2937; background: #f6f7f9; margin: 0; }
header { background: #0f3d5e; color: #fff; padding: .75rem 1.25rem; }
header h1 { margin: 0; font-size: 1.3rem; } .sub { font-weight: 400; opacity: .9; }
header a { color: #fff; margin-right: .8rem; } header p { margin: .25rem 0; }
main { padding: 0 1.25rem 2rem; max-width: 90rem; }
section { background: #fff; border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem 1rem; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
h2 { font-size: 1.15rem; } h3 { font-size: 1rem; margin: .75rem 0 .25rem; }
.skip { position: absolute; left: -999px; } .skip:focus { left: .5rem; top: .5rem; background: #fff; color: #0b5cad; padding: .25rem .5rem; z-index: 2; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.filters label { margin-right: .75rem; white-space: nowrap; } .filters { margin-bottom: .5rem; }
input, select, button { font: inherit; } input, select { border: 1px solid #6b7280; border-radius: 4px; padding: .1rem .3rem; }
button { background: #0b5cad; color: #fff; border: 0; border-radius: 4px; padding: .2rem .7rem; cursor: pointer; margin: .1rem .2rem .1rem 0; }
button.link { background: none; color: #0b5cad; text-decoration: underline; padding: 0; }
button:focus-visible, a:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #f59e0b; outline-offset: 1px; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
tr.new { background: #fff7d6; } tr.open { background: #e0edff; }
.s2 { color: #166534; } .s4 { color: #9a3412; } .s5 { color: #991b1b; font-weight: 600; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: #f1f3f5; padding: .5rem; border-radius: 4px; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-all; }
.detail { border-left: 4px solid #0b5cad; padding-left: .75rem; margin-top: .75rem; }
.note { color: #4b5563; margin: .25rem 0; } .result { margin-top: .5rem; }
.chips { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem; } .chips li { margin: 0; }
ol.timeline { padding-left: 1.25rem; } ol.timeline li { margin: .15rem 0; }
.delivery { border: 1px solid #e5e7eb; border-radius: 6px; padding: .4rem .6rem; margin: .4rem 0; }
.control { border-top: 1px solid #e5e7eb; padding: .4rem 0; }
.control label { margin-right: .75rem; } .control code { margin-left: .25rem; }
fieldset { border: 1px solid #d1d5db; border-radius: 4px; } .answer code { white-space: pre-wrap; word-break: break-all; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0 1rem; margin: .25rem 0; } .facts dt { font-weight: 600; } .facts dd { margin: 0; }
`;
