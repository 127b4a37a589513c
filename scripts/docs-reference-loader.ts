/**
 * A reference page's first visit without Redoc's script: `redocly build-docs` writes the reference
 * rendered ahead of time (every section of the overview, the menu, the operations of the first
 * route) and a module that imports Redoc's 2.3 MB script (520-570 KB with Brotli: Redoc 3 bundles
 * React, its GraphQL, AsyncAPI and Arazzo renderers and a YAML parser, whatever the document) and
 * hydrates it at once. That script alone weighed more than the 300 KB a first visit may cost.
 *
 * Here the import becomes a dynamic `import()` made on the reader's first use of the page: a
 * pointer moved or pressed, a key, a touch, the wheel, the focus entering the page (the search box),
 * or a change of the hash route (a menu link of the prerendered menu). A page opened at a route of
 * its own (`gateway.html#/section/errors`) hydrates at once, since only Redoc shows that route.
 * Until then the prerendered reference is readable and its links work; nothing else changes.
 * The `modulepreload` link, which would download the script on load, is removed with it.
 */
/** The events that count as a reader using the page. */
const FIRST_USE = ['pointermove', 'pointerdown', 'keydown', 'touchstart', 'wheel', 'focusin', 'hashchange'];

/** Redoc's page with its script loaded on first use instead of on load; undefined when Redoc's page is not as expected. */
export function hydrateOnFirstUse(html: string, bundle: string): string | undefined {
  const preload = new RegExp(`<link rel="modulepreload" href="\\./${escapeRegExp(bundle)}"[^>]*>\\s*`);
  const staticImport = `import { hydrate } from "./${bundle}";`;
  const call = "hydrate(__redoc_definition, __redoc_options, document.getElementById('redoc'));";
  if (!preload.test(html) || !html.includes(staticImport) || html.split(call).length !== 2) {
    return undefined;
  }
  const loader = [
    `const __redoc_events = ${JSON.stringify(FIRST_USE)};`,
    'let __redoc_started = false;',
    'const __redoc_start = () => {',
    '        if (__redoc_started) return;',
    '        __redoc_started = true;',
    '        for (const type of __redoc_events) removeEventListener(type, __redoc_start, true);',
    `        import("./${bundle}").then(({ hydrate }) => ${call.slice(0, -1)});`,
    '      };',
    '      if (/^#\\/./.test(location.hash)) __redoc_start();',
    '      else for (const type of __redoc_events) addEventListener(type, __redoc_start, { capture: true, passive: true });',
  ].join('\n      ');
  return html.replace(preload, '').replace(staticImport, '').replace(call, loader);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
