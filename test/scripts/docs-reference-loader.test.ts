/**
 * The rewrite of Redoc's page that loads its script on the reader's first use
 * (scripts/docs-reference-loader.ts): the preload and the static import go, the hydration waits
 * for an event or a route, and a page that is not shaped as expected is refused.
 */
import { describe, expect, it } from 'vitest';
import { hydrateOnFirstUse } from '../../scripts/docs-reference-loader.js';

const BUNDLE = 'assets/redoc.0123456789abcdef.js';
const PAGE = `<head><link rel="modulepreload" href="./${BUNDLE}" integrity="sha384-x" crossorigin="anonymous" />
<title>t</title></head><body><div id="redoc"><a href="#/webhooks">Webhooks</a></div>
<script type="module">
      import { hydrate } from "./${BUNDLE}";
      const __redoc_definition = {};
      const __redoc_options = {};
      hydrate(__redoc_definition, __redoc_options, document.getElementById('redoc'));
      </script></body>`;

describe('hydrateOnFirstUse', () => {
  it('drops the preload and the static import, and imports the script on first use or at once on a route', () => {
    const page = hydrateOnFirstUse(PAGE, BUNDLE) ?? '';
    expect(page).not.toContain('modulepreload');
    expect(page).not.toContain(`import { hydrate } from`);
    expect(page).toContain(`import("./${BUNDLE}").then(({ hydrate }) => hydrate(__redoc_definition, __redoc_options, document.getElementById('redoc')))`);
    for (const event of ['pointermove', 'pointerdown', 'keydown', 'touchstart', 'wheel', 'focusin', 'hashchange']) expect(page).toContain(`"${event}"`);
    expect(page).toContain('if (/^#\\/./.test(location.hash)) __redoc_start();');
    expect(page).toContain('<div id="redoc"><a href="#/webhooks">Webhooks</a></div>');
  });

  it('refuses a page without the preload, the import or the one hydration call', () => {
    expect(hydrateOnFirstUse(PAGE.replace(/<link[^>]*>/, ''), BUNDLE)).toBeUndefined();
    expect(hydrateOnFirstUse(PAGE.replace('import { hydrate }', 'import { render }'), BUNDLE)).toBeUndefined();
    expect(hydrateOnFirstUse(PAGE.replace('hydrate(__redoc_definition', 'render(__redoc_definition'), BUNDLE)).toBeUndefined();
    expect(hydrateOnFirstUse(PAGE, 'assets/redoc.fedcba9876543210.js')).toBeUndefined();
  });
});
