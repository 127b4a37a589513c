/**
 * The site's pages beyond the landing page, the references and the guides: one module per page,
 * one line each here. `npm run docs` (scripts/docs-site.ts) writes every page listed, in this
 * order, inside the site's layout, and links it from the top navigation.
 */
import type { ExtraPage } from './page.js';
import { changelogPage } from './changelog.js';
import { consolePage } from './console.js';
import { contractChangesPage } from './contract-changes.js';

export type { ExtraPage } from './page.js';

export const EXTRA_PAGES: readonly ExtraPage[] = [
  changelogPage,
  contractChangesPage,
  consolePage,
];
