/**
 * The search box of every page of the docs site, in the browser (bundled with Fuse.js into
 * assets/search.<hash>.js by scripts/docs-search.ts). The script's tag names the index
 * (`data-index`), fetched from the site when the box is first used. On a guide the box sits in the
 * top bar; on a page that marks its own bar with `data-site-search` (the try-it console's note above
 * Scalar) in that bar; on a reference (Redoc's page, which has no bar) in a bar of its own above Redoc.
 * Typing shows the ten best results as links (the page and place each leads to; those titled as
 * typed first, a reference's Errors table before the guides naming the code); Enter opens the
 * first, the arrow keys move between them, Escape closes the list.
 */
import Fuse from 'fuse.js/basic';

interface SearchEntry {
  title: string;
  where: string;
  text: string;
  url: string;
  kind: string;
}

interface SearchIndex {
  /** The fields searched and their weights (a title counts most). */
  keys: { name: string; weight: number }[];
  entries: SearchEntry[];
}
const LIMIT = 10;

const script = document.currentScript as HTMLScriptElement | null;
const indexUrl = script?.dataset.index ?? '';
let searcher: Promise<Fuse<SearchEntry>> | undefined;

function load(): Promise<Fuse<SearchEntry>> {
  searcher ??= fetch(indexUrl)
    .then((response) => {
      if (!response.ok) throw new Error(`the search index answered ${response.status}`);
      return response.json() as Promise<SearchIndex>;
    })
    .then(({ keys, entries }) => new Fuse(entries, { keys, ignoreLocation: true, threshold: 0.3, minMatchCharLength: 2 }));
  return searcher;
}

/**
 * Fuse's order, except that entries titled exactly as the query come first, a reference's Errors
 * table before the guides' sections that name the same code (Fuse may score a guide's shorter text
 * higher).
 */
function ranked(found: SearchEntry[], query: string): SearchEntry[] {
  const wanted = query.toLowerCase();
  const rank = (entry: SearchEntry) => (entry.title.toLowerCase() !== wanted ? 2 : entry.kind === 'error' ? 0 : 1);
  return found.map((entry, index) => ({ entry, index })).sort((a, b) => rank(a.entry) - rank(b.entry) || a.index - b.index).map(({ entry }) => entry);
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function searchBox(): HTMLFormElement {
  const form = element('form', { class: 'site-search', role: 'search', action: '#' });
  const input = element('input', {
    type: 'search',
    name: 'q',
    placeholder: 'Search guides and references',
    'aria-label': 'Search the guides and the API references',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const list = element('ol', { class: 'site-search-results', 'aria-label': 'Search results', hidden: '' });
  const status = element('p', { class: 'site-search-status', 'aria-live': 'polite', hidden: '' });
  form.append(input, status, list);

  let generation = 0;
  const show = async () => {
    const query = input.value.trim();
    const mine = ++generation;
    if (query.length < 2) {
      list.hidden = true;
      status.hidden = true;
      return;
    }
    let results: SearchEntry[];
    try {
      results = ranked((await load()).search(query, { limit: LIMIT * 3 }).map((r) => r.item), query).slice(0, LIMIT);
    } catch (error) {
      status.textContent = `Search is unavailable: ${(error as Error).message}.`;
      status.hidden = false;
      return;
    }
    if (mine !== generation) return; // a later keystroke has its own results
    list.replaceChildren(
      ...results.map((entry) => {
        const item = element('li', { class: `kind-${entry.kind}` });
        const link = element('a', { href: entry.url });
        link.append(element('strong', {}, entry.title), element('span', { class: 'where' }, entry.where));
        if (entry.text) link.append(element('span', { class: 'excerpt' }, entry.text.length > 150 ? `${entry.text.slice(0, 147)}...` : entry.text));
        item.append(link);
        return item;
      }),
    );
    status.textContent = results.length === 0 ? `Nothing found for "${query}".` : `${results.length} result${results.length === 1 ? '' : 's'}`;
    status.hidden = results.length !== 0;
    list.hidden = results.length === 0;
  };

  input.addEventListener('input', () => void show());
  input.addEventListener('focus', () => void load().catch(() => undefined), { once: true });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const first = list.querySelector<HTMLAnchorElement>('a');
    if (first) first.click();
  });
  form.addEventListener('keydown', (event) => {
    const links = [...list.querySelectorAll<HTMLAnchorElement>('a')];
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    if (event.key === 'Escape') {
      list.hidden = true;
      input.focus();
    } else if (event.key === 'ArrowDown' && links.length > 0) {
      event.preventDefault();
      links[Math.min(at + 1, links.length - 1)]?.focus();
    } else if (event.key === 'ArrowUp' && at >= 0) {
      event.preventDefault();
      if (at === 0) input.focus();
      else links[at - 1]?.focus();
    }
  });
  document.addEventListener('click', (event) => {
    if (!form.contains(event.target as Node)) list.hidden = true;
  });
  // A link to another place of the same page (a Redoc route) does not reload it: close the list.
  list.addEventListener('click', () => {
    list.hidden = true;
  });
  return form;
}

function place(): void {
  const bar = document.querySelector('header.top, [data-site-search]');
  if (bar) {
    bar.append(searchBox());
    return;
  }
  const own = element('div', { class: 'site-search-bar' });
  const home = element('a', { href: 'index.html', class: 'home' }, 'Pay-later API documentation');
  own.append(home, searchBox());
  document.body.prepend(own);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', place);
else place();
