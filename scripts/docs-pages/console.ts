/**
 * The try-it console (site/console.html): Scalar's API reference, whose built-in API client sends
 * a request from the page and shows the answer, with the four documents and every server pointed
 * at the local sandbox through the docs server (`/sandbox/<family>`, scripts/docs-sandbox-proxy.ts),
 * which signs the web and SDK families' requests with the sandbox's test key.
 *
 * Scalar rather than Redocly: Redoc, which renders the references, has no way to send a request
 * (Redocly's "Try it" is in its commercial products only); Scalar's reference is MIT-licensed,
 * maintained, and ships one standalone browser bundle (`@scalar/api-reference/dist/browser/
 * standalone.js`, copied to site/assets/scalar/ under its hashed name), so the page works offline: its web fonts are
 * switched off (`withDefaultFonts: false`) and no request proxy is configured, and the page's
 * Content-Security-Policy allows only its own origin. Version 1.46.4 is pinned: it is the newest
 * whose package says it runs on Node 20.
 *
 * The site's search box (scripts/docs-search-client.ts) sits in the note above Scalar, the bar the
 * page marks with `data-site-search`: the same search over the guides and the four references as on
 * every other page (Scalar's own search finds only the operations of the document shown).
 *
 * The documents of the console are copies: servers replaced by the docs server's sandbox route;
 * `X-Signature` optional, since the docs server fills it in; the partner id's example is the
 * sandbox's test partner.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { hashedName, writeHashedAsset } from '../docs-assets.js';
import { FAMILIES, familyInfo, type Family } from '../families.js';
import type { ExtraPage, PageContext } from './page.js';


/** The console's copy of a family's document: servers and signature headers for the sandbox route. */
function consoleDocument(family: Family, document: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(document);
  copy.servers = [
    {
      url: `/sandbox/${family}`,
      description: familyInfo(family).signed
        ? "The local sandbox, through the docs server, which signs each request with the sandbox's test key"
        : 'The local sandbox, through the docs server (test credentials: see the sandbox guide)',
    },
  ];
  if (familyInfo(family).signed) signatureHeaders(copy, family);
  return copy;
}

/** Every header parameter of the copy (components and inline): the signature optional, the test partner as example. */
function signatureHeaders(node: unknown, family: Family, depth = 0): void {
  if (depth > 64 || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) signatureHeaders(item, family, depth + 1);
    return;
  }
  const parameter = node as Record<string, unknown>;
  if (parameter.in === 'header' && typeof parameter.name === 'string') {
    const name = parameter.name.toLowerCase();
    if (name === 'x-signature') {
      parameter.required = false;
      delete parameter.example;
      delete parameter.examples;
      parameter.description = "Leave it out: the docs server signs the request with the sandbox's test key (never a real key).";
    }
    if (name === 'x-partner-id' || name === 'x-partnerid') parameter.example = TEST_CREDENTIALS.partner.id;
  }
  for (const value of Object.values(parameter)) signatureHeaders(value, family, depth + 1);
}

/** Scalar's browser bundle (the package's exports name neither it nor package.json: found where npm installs it). */
function scalarBundle(context: PageContext): Buffer {
  const bundle = join(context.root, 'node_modules', '@scalar', 'api-reference', 'dist', 'browser', 'standalone.js');
  if (!existsSync(bundle)) throw new Error(`Scalar's browser bundle is missing (${bundle}); run \`npm ci\`.`);
  return readFileSync(bundle);
}

function readDocument(context: PageContext, family: Family): Record<string, unknown> {
  return JSON.parse(readFileSync(join(context.documentsDir, `${family}.json`), 'utf8')) as Record<string, unknown>;
}

export const consolePage: ExtraPage = {
  file: 'console.html',
  title: 'Try it against the sandbox',
  label: 'Try it',
  fullPage: true,
  write(siteDir, context) {
    writeHashedAsset(siteDir, 'scalar/standalone.js', scalarBundle(context));
    mkdirSync(join(siteDir, 'openapi', 'console'), { recursive: true });
    for (const family of FAMILIES) {
      writeFileSync(join(siteDir, 'openapi', 'console', `${family}.json`), JSON.stringify(consoleDocument(family, readDocument(context, family))));
    }
  },
  render(context) {
    const sources = FAMILIES.map((family, index) => ({
      title: String((readDocument(context, family).info as Record<string, unknown>).title ?? family),
      slug: family,
      url: `openapi/console/${family}.json`,
      ...(index === 0 ? { default: true } : {}),
    }));
    const configuration = {
      sources,
      withDefaultFonts: false,
      // Nothing that calls Scalar's services: no AI agent, no developer toolbar.
      agent: { disabled: true },
      showDeveloperTools: 'never',
      hideDownloadButton: false,
      showSidebar: true,
      hideModels: false,
      darkMode: false,
      layout: 'modern',
      persistAuth: false,
      authentication: {
        preferredSecurityScheme: null,
      },
    };
    // JSON inside a <script>: `<` escaped so that no text can close the element.
    const json = JSON.stringify(configuration).replace(/</g, '\\u003c');
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="${context.csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Try it against the sandbox | Pay-later API documentation</title>
  <link rel="icon" href="assets/favicon.svg" type="image/svg+xml">
  <style>body { margin: 0; } .console-note { position: relative; z-index: 10; display: flex; align-items: center; gap: 1em; font: 14px system-ui, sans-serif; padding: 0.45em 1.2em; background: #f5f7fa; border-bottom: 1px solid #dde2ea; } .console-note p { margin: 0; } .console-note a { color: #0b5cad; }</style>
</head>
<body>
  <div class="console-note" data-site-search><p><a href="index.html">Pay-later API documentation</a> · Try it: every request goes to the local sandbox
  (<code>npm start</code>) through the docs server (<code>npm run docs:serve</code>), which signs the web and SDK
  requests with the sandbox's test key. Gateway: Basic <code>${TEST_CREDENTIALS.merchantApi.username}</code> /
  <code>${TEST_CREDENTIALS.merchantApi.password}</code>; extras: <code>${TEST_CREDENTIALS.extras.username}</code> /
  <code>${TEST_CREDENTIALS.extras.password}</code> (the sandbox's test credentials).</p></div>
  <div id="app"></div>
  <script src="assets/${hashedName('scalar/standalone.js', scalarBundle(context))}"></script>
  <script>Scalar.createApiReference('#app', ${json});</script>
</body>
</html>
`;
  },
};
