/** What a page of the site's registry (./index.ts) is, and what the build gives it. */

export interface PageContext {
  /** The repository's root folder. */
  root: string;
  /** Where the bundled documents are (generated/openapi/ unless the build says otherwise). */
  documentsDir: string;
  /** Markdown to HTML as the guides are rendered (heading anchors, links between guides rewritten). */
  markdown(text: string): string;
  escapeHtml(text: string): string;
  /** The Content-Security-Policy of every page of the site (its own origin only). */
  csp: string;
}

export interface ExtraPage {
  /** The file under the site, e.g. `changelog.html`. */
  file: string;
  /** The page's title (the <title> and the sitemap). */
  title: string;
  /** Its short label in the top navigation. */
  label: string;
  /** The page's main content, as HTML (the layout around it is the site's), or with `fullPage` the whole page. */
  render(context: PageContext): string;
  /** The page is a document of its own (its head and policy included), not inside the site's layout. */
  fullPage?: boolean;
  /** Writes what the page needs beside it under the site's folder (scripts, documents). */
  write?(siteDir: string, context: PageContext): void;
}
