/**
 * The site search's index (scripts/docs-search.ts): a guide's entries link to the anchors its page
 * gives its headings; a reference's sections, tags and operations link to Redoc's routes as its
 * prerendered page names them; each error code of a reference's "Errors" table is an entry of its
 * own, spelt as written (underscores kept), leading to that table.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guideEntries, guideMentions, markdownSections, redocRoutes, referenceEntries, searchText } from '../../scripts/docs-search.js';

const root = resolve(import.meta.dirname, '..', '..');

describe('the entries of a guide', () => {
  it('one per heading, numbered as the page numbers repeated headings, the first leading to the page', () => {
    const markdown = '# Flows\n\nIntro with `NO_SUCH_TRANSACTION`.\n\n## Web flow\n\nThe **web** flow.\n\n## Web flow\n\nAgain.\n\n### The `status` call\n\nPoll.';
    const entries = guideEntries({ file: 'flows.html', title: 'Flows' }, markdown);
    expect(entries.map((e) => [e.title, e.url])).toEqual([
      ['Flows', 'flows.html'],
      ['Web flow', 'flows.html#web-flow'],
      ['Web flow', 'flows.html#web-flow-1'],
      ['The status call', 'flows.html#the-status-call'],
    ]);
    expect(entries[0]?.text).toBe('Intro with NO_SUCH_TRANSACTION.');
    expect(entries[1]?.where).toBe('Guide · Flows');
  });

  it('keeps underscores inside words and drops emphasis, code marks, links and tags', () => {
    expect(searchText('_emphasis_ and `NO_SUCH_TRANSACTION`, **bold** [a link](x.md) <br>')).toBe('emphasis and NO_SUCH_TRANSACTION, bold a link');
    expect(markdownSections('## A\n\n| x | `Y_Z` |\n|---|---|\n| 1 | 2 |\n')[0]?.text).toContain('Y_Z');
  });
});

describe("a guide's mentions of error codes", () => {
  it('one entry per section and code of the Errors tables, with the words around it, however far down the section', () => {
    const filler = 'Words before the code. '.repeat(60);
    const markdown = `# Refunds\n\nIntro.\n\n## Retrying\n\n${filler}A refund of an unknown id answers \`NO_SUCH_TRANSACTION\`; \`NO_SUCH_TRANSACTION\` again, and \`SUCCESS\`, \`NO_SUCH_TRANSACTIONS\`.\n`;
    const entries = guideMentions({ file: 'refunds.html', title: 'Refunds' }, markdown, new Set(['NO_SUCH_TRANSACTION', 'BAD_REQUEST']));
    expect(entries).toEqual([
      {
        title: 'NO_SUCH_TRANSACTION',
        where: 'Guide · Refunds · Retrying',
        text: expect.stringMatching(/^\.\.\.(Words before the code\. )+A refund of an unknown id answers NO_SUCH_TRANSACTION; NO_SUCH_TRANSACTION again/),
        url: 'refunds.html#retrying',
        kind: 'guide',
      },
    ]);
    // The section's own entry keeps only the start of its text, without the code.
    expect(guideEntries({ file: 'refunds.html', title: 'Refunds' }, markdown)[1]?.text).not.toContain('NO_SUCH_TRANSACTION');
  });
});

describe('the entries of a reference', () => {
  const document = JSON.parse(readFileSync(join(root, 'generated', 'openapi', 'gateway.json'), 'utf8')) as Record<string, unknown>;
  // Redoc's prerendered sidebar names the routes of the overview's sections and of the tags.
  const prerendered = [
    '<a href="#/section/credentials"><span>Credentials</span></a>',
    '<a href="#/section/errors" class="x"><span>Errors</span></a>',
    '<a href="#/section/errors"></a>',
    '<a href="#/transactions">Transactions</a>',
  ].join('\n');

  it('reads the routes from the prerendered links, the first labelled link of each', () => {
    expect(redocRoutes(prerendered)).toEqual(
      new Map([
        ['Credentials', '#/section/credentials'],
        ['Errors', '#/section/errors'],
        ['Transactions', '#/transactions'],
      ]),
    );
  });

  it('an error code leads to the Errors table, with the rows that name it; an operation to its route', () => {
    const entries = referenceEntries('gateway', document, prerendered);
    const error = entries.find((e) => e.kind === 'error' && e.title === 'NO_SUCH_TRANSACTION');
    expect(error).toMatchObject({ url: 'gateway.html#/section/errors', where: 'Gateway integration reference · Errors' });
    expect(error?.text).toContain('404 NO_SUCH_TRANSACTION');
    expect(entries.find((e) => e.title === 'Credentials')?.url).toBe('gateway.html#/section/credentials');
    expect(entries.find((e) => e.kind === 'operation' && e.text.startsWith('createTransaction '))?.url).toBe('gateway.html#/transactions/createtransaction');
    // No route in the page, no entry: a search never leads to a place Redoc does not have.
    expect(entries.some((e) => e.url.includes('#/merchants'))).toBe(false);
    expect(entries.some((e) => e.title === 'Versioning')).toBe(false);
  });
});
