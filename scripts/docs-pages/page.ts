/** What a page of the site's registry (./index.ts) is, and what the build gives it. */

export interface PageContext {
  /** The repository's root folder. */
  root: string;
  /** Where the bundled documents are (generated/openapi/ unless the build says otherwise). */
  documentsDir: string;
  /** Markdown to HTML as the guides are rendered (heading anchors, links between guides rewritten). */
  markdown(text: string): string;
  escapeHtml(text: string): string;
}

export interface ExtraPage {
  /** The file under the site, e.g. `changelog.html`. */
  file: string;
  /** The page's title (the <title> and the sitemap). */
  title: string;
  /** Its short label in the top navigation. */
  label: string;
  /** The page's main content, as HTML (the layout around it is the site's). */
  render(context: PageContext): string;
}
