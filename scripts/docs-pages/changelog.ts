/** The changelog page: CHANGELOG.md, rendered like a guide. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtraPage } from './page.js';

export const changelogPage: ExtraPage = {
  file: 'changelog.html',
  title: 'Changelog',
  label: 'Changelog',
  render: (context) =>
    `<article class="guide changelog">\n${context.markdown(readFileSync(join(context.root, 'CHANGELOG.md'), 'utf8'))}\n` +
    '<p>What changed in the contract itself, operation by operation: <a href="contract-changes.html">Contract changes</a>.</p>\n</article>',
};
