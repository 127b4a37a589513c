/**
 * Global setup of the browser tests (`npm run test:e2e`): builds the docs site once, into site/,
 * before any file runs. The files that look at it (test/e2e/browser.ts's `startDocsSite`) serve
 * that build and read its pages as `inject('sitePages')`: built by each of them, the site was built
 * three times a run, and with the files running two at a time a build replacing site/ would pull it
 * from under another file's server.
 */
import type { TestProject } from 'vitest/node';
import { buildDocs, SITE_DIR, type SitePage } from '../../scripts/docs-site.js';

export default async function setup(project: TestProject): Promise<void> {
  const pages = await buildDocs({ outDir: SITE_DIR });
  project.provide('sitePages', pages);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The pages of the docs site built for this run (test/support/build-site.ts). */
    sitePages: SitePage[];
  }
}
