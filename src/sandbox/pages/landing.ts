/**
 * `GET /`: a tiny HTML page that says what this server is: the families it serves, where their
 * documentation is, the sandbox-only endpoints, the browser script, and the example merchant.
 */
import { familyInfo } from '../../contract/families.js';
import type { Reply } from '../router.js';
import type { FamilyName } from '../validation.js';
import { escapeHtml, htmlReply, newNonce } from './html.js';

/** The default address of examples/merchant/server.ts. */
const EXAMPLE_MERCHANT_URL = 'http://127.0.0.1:4001/';

export function landingPage(families: readonly FamilyName[]): Reply {
  const nonce = newNonce();
  const items = families
    .map((family) => {
      const { label, paths } = familyInfo(family);
      return `<li><strong>${escapeHtml(label)}</strong> <code>${escapeHtml(paths)}</code>
        — contract <code>openapi/${escapeHtml(family)}.yaml</code></li>`;
    })
    .join('\n');
  const web = families.includes('web');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay-later sandbox</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">
  body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2937; background: #f6f7f9; margin: 0; }
  main { max-width: 46rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
  h1 { margin-top: 0; } code { background: #f1f3f5; padding: 0 .25em; border-radius: 4px; font-size: .9em; }
  a { color: #0b5cad; } li { margin: .35rem 0; }
</style>
</head>
<body>
<main>
<h1>Pay-later sandbox</h1>
<p>A local, stateful stand-in for the pay-later service. Its guide is <code>docs/sandbox.md</code>; the
decisions it follows are in <code>docs/decisions.md</code>; <code>npm run docs:serve</code> serves the API references.</p>
<h2>Families served</h2>
<ul>
${items}
</ul>
<h2>Sandbox endpoints</h2>
<ul>
<li><a href="/dashboard">/dashboard</a> — the dashboard: requests, transactions and webhooks, live, with the controls</li>
<li><a href="/sandbox/clock">/sandbox/clock</a> — the virtual clock (<code>POST /sandbox/clock/advance</code> moves it)</li>
<li><a href="/sandbox/webhooks/deliveries">/sandbox/webhooks/deliveries</a> — every webhook sent and its attempts</li>
${web ? '<li><a href="/sdk.js">/sdk.js</a> — the browser script of the web flow</li>' : ''}
</ul>
${
  web
    ? `<h2>Example merchant</h2>
<p>A small shop that takes pay-later payments through this sandbox with <code>sdk.js</code>:
run <code>npx tsx examples/merchant/server.ts</code> (see <code>examples/merchant/README.md</code>), then open
<a href="${EXAMPLE_MERCHANT_URL}">${EXAMPLE_MERCHANT_URL}</a> (its port is <code>PORT</code>'s when set).</p>`
    : ''
}
</main>
</body>
</html>
`;
  return htmlReply(html, { nonce });
}
