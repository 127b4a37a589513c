/**
 * Text helpers shared by the pages of the docs site (scripts/docs-site.ts) and its search index
 * (scripts/docs-search.ts), so that a search result links to the same heading anchor the page has.
 */

/** Markdown inline text without its marks: `code`, **bold**, [links](x). */
export function plain(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, '')
    .trim();
}

/** A heading's anchor in a guide: lowercase letters and digits, joined by hyphens. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The anchors of a page's headings in order, as the guides number repeats (`x`, `x-1`, ...). */
export function headingIds(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = slug(plain(text)) || 'section';
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}
