/**
 * A family's API reference page: `redocly build-docs` renders it ahead of time with our template
 * (the policy, the favicon, the title), then the page is made self-contained: Redoc's script is the
 * local copy under its hashed name (its attribution logo read from the local assets), loaded on the
 * reader's first use (scripts/docs-reference-loader.ts), and the prerendered links become the hash
 * routes the page uses. Each step fails the build loudly when Redoc's page changes.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { CSP, DocsBuildError } from './docs-policy.js';
import { hydrateOnFirstUse } from './docs-reference-loader.js';
import type { Family } from './families.js';

const root = resolve(import.meta.dirname, '..');

/** The CDN addresses of the "API docs by Redocly" logo in Redoc's page, and their local copies. */
const REDOC_LOGOS: [string, string][] = [
  ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'assets/redocly-logo-full.svg'],
  ['https://cdn.redoc.ly/redoc/logo-mini.svg', 'assets/redocly-logo.svg'],
];

/**
 * Redoc's browser script as the Redocly CLI ships it: `build-docs` inlines this file into every
 * page with `--inlineBundle`, or imports the same file from Redocly's CDN without it.
 */
const REDOC_BUNDLE = join(root, 'node_modules', '@redocly', 'cli', 'lib', 'chunks', 'redoc.standalone.js');

/**
 * Renders one family with `redocly build-docs` and makes the page self-contained. Redoc's script
 * (2.3 MB, 0.5 MB with Brotli: most of a reference page) is not inlined: the page imports the local
 * copy under its hashed name (`bundle`, `assets/redoc.<hash>.js`), which the browser downloads once
 * for the four references and keeps.
 */
export async function renderReference(family: Family, document: Record<string, unknown>, bundle: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `paylater-docs-${family}-`));
  try {
    // The rendered copy only: the sidebar logo leads back to the landing page.
    const info = { ...(document.info as Record<string, unknown>) };
    info['x-logo'] = { url: 'assets/logo.svg', href: 'index.html', altText: 'Pay-later API documentation: home' };
    // The try-it console of this family (scripts/docs-pages/console.ts), against the local sandbox.
    info.description = `[Try it against the local sandbox](console.html?api=${family}) (served by \`npm run docs:serve\` beside \`npm start\`).\n\n${String(info.description ?? '')}`;
    const input = join(dir, `${family}.json`);
    const output = join(dir, `${family}.html`);
    const template = join(dir, 'reference.hbs');
    writeFileSync(input, JSON.stringify({ ...document, info }));
    writeFileSync(template, REFERENCE_TEMPLATE);
    const title = `${String(info.title ?? family)} | Pay-later API reference`;
    await run(join(root, 'node_modules', '.bin', 'redocly'), [
      'build-docs', input, '--template', template, '--output', output, '--title', title, '--lint-config', 'off',
    ]);
    return makeSelfContained(localRedoc(readFileSync(output, 'utf8'), family, bundle), family);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // REDOCLY_TELEMETRY=off: no usage report from the CLI, and `disableTelemetry: true` in the page.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => reject(new DocsBuildError(`could not run ${basename(command)}: ${error.message}`)));
    child.once('exit', (code) => {
      if (code === 0) resolveRun();
      else reject(new DocsBuildError(`${basename(command)} ${args.slice(0, 2).join(' ')} failed (exit ${code}):\n${output.trim()}`));
    });
  });
}

/**
 * The page around Redoc's prerendered reference (Handlebars, for `redocly build-docs --template`):
 * the security policy, the favicon and the title; `redocHead` holds Redoc's styles, `redocHTML`
 * the prerendered page and its inline script.
 */
const REFERENCE_TEMPLATE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="${CSP}">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{title}}</title>
  <link rel="icon" href="assets/favicon.svg" type="image/svg+xml">
  <style>body { padding: 0; margin: 0; }
  /* A flow diagram at its drawn size (labels of 16 px), scrolled sideways in the column, never shrunk to unreadable text. */
  #redoc a:has(> img[src^="assets/diagrams/"]) { display: block; overflow-x: auto; }
  #redoc img[src^="assets/diagrams/"] { max-width: none; width: auto; height: auto; }</style>
  {{{redocHead}}}
</head>
<body>
  {{{redocHTML}}}
</body>
</html>
`;

/**
 * Redoc's page without `--inlineBundle` imports `hydrate` from Redocly's CDN and preloads it with
 * the file's SHA-384 (`integrity`): that integrity must be node_modules' copy's, so the CDN's file and
 * ours are the same version of Redoc. The page then imports the local copy on the reader's first use
 * (scripts/docs-reference-loader.ts), a same-origin module with no preload left to carry the hash.
 */
function localRedoc(html: string, family: string, bundle: string): string {
  const cdn = /https:\/\/cdn\.redocly\.com\/redoc\/v[^"'\s]+\/redoc\.standalone\.js/g;
  const addresses = new Set(html.match(cdn) ?? []);
  if (addresses.size !== 1) throw new DocsBuildError(`${family}.html: Redoc's page does not import one bundle from Redocly's CDN (found ${addresses.size}).`);
  const integrity = html.match(/integrity="(sha384-[^"]+)"/)?.[1];
  if (integrity !== sha384(readFileSync(REDOC_BUNDLE))) {
    throw new DocsBuildError(`${family}.html: the Redoc bundle the page expects is not node_modules' copy (${REDOC_BUNDLE}); run \`npm ci\`.`);
  }
  const page = hydrateOnFirstUse(html.replace(cdn, `./${bundle}`), bundle);
  if (page === undefined) throw new DocsBuildError(`${family}.html: Redoc's page no longer preloads, imports and hydrates its bundle as expected; update scripts/docs-reference-loader.ts.`);
  return page;
}

/** Redoc's bundle with the attribution logo it loads from Redocly's CDN read from the local assets. */
export function localRedocBundle(): string {
  if (redocBundleCopy !== undefined) return redocBundleCopy;
  let bundle = readFileSync(REDOC_BUNDLE, 'utf8');
  for (const [remote, local] of REDOC_LOGOS) bundle = bundle.split(remote).join(local);
  if (/https:\/\/cdn\.redoc\.ly\/[^"'`\s]+\.svg/.test(bundle)) throw new DocsBuildError(`Redoc's bundle loads a picture from Redocly's CDN that has no local copy.`);
  redocBundleCopy = bundle;
  return bundle;
}
let redocBundleCopy: string | undefined;

function sha384(content: string | Buffer): string {
  return `sha384-${createHash('sha384').update(content).digest('base64')}`;
}

/**
 * Makes Redoc's page work offline: the attribution logo from the local assets (the head, with
 * its Content-Security-Policy, comes from REFERENCE_TEMPLATE). Throws when the page lacks the
 * policy or still loads a script or style sheet from elsewhere (the Redoc bundle must be inline).
 */
function makeSelfContained(html: string, family: string): string {
  let page = html;
  for (const [remote, local] of REDOC_LOGOS) page = page.split(remote).join(local);
  if (!page.includes(`<meta http-equiv="Content-Security-Policy" content="${CSP}">`)) {
    throw new DocsBuildError(`${family}.html: the page was not built from the reference template (no Content-Security-Policy).`);
  }
  page = hashRoutes(page, family);
  const external = page.match(/<(?:script|link)\b[^>]*\b(?:src|href)=["']?(?:https?:)?\/\/[^"'\s>]+|\bimport\b[^;]*\bfrom\s*["'](?:https?:)?\/\/[^"']+/i);
  if (external) throw new DocsBuildError(`${family}.html still loads ${external[0]}: the Redoc bundle must be the local copy.`);
  if (!/"disableTelemetry":true/.test(page)) throw new DocsBuildError(`${family}.html: Redoc's telemetry is not disabled.`);
  return page;
}

/**
 * Redoc's page routes by the URL's hash (`sdk.html#/webhooks`), but the HTML that Redocly renders
 * ahead of time links the routes as paths (`href="/webhooks"`). React keeps those attributes when
 * the page hydrates at its first route, so a link opened in a new tab would lead to a missing page.
 * Writing them as the hash routes the page uses makes both agree.
 */
function hashRoutes(page: string, family: string): string {
  const start = page.indexOf('<div id="redoc">');
  const end = page.indexOf('<script type="module">', start);
  if (start < 0 || end < 0) throw new DocsBuildError(`${family}.html: Redoc's page has no prerendered <div id="redoc">.`);
  const content = page.slice(start, end).replace(/\bhref="\/(?!\/)/g, 'href="#/');
  return page.slice(0, start) + content + page.slice(end);
}
