/**
 * Words for integrators: what an integrator reads (the error text and help of src/, the guides
 * for integrators) names no decision number. Decision numbers stay in the decision records, the
 * code's comments and the contract's `x-decision` marks, where the project's maintainers read them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DECISION = /\bD\d{2,3}\b/;

function files(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every string literal and template text of a TypeScript file, with its line. */
function stringsOf(path: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The guides an integrator reads (the README's "For integrators" list, and the README itself). */
const INTEGRATOR_PAGES = [
  'README.md',
  'examples/merchant/README.md',
  'docs/getting-started.md',
  'docs/web-checkout.md',
  'docs/walkthrough.md',
  'docs/authentication.md',
  'docs/flows.md',
  'docs/states.md',
  'docs/webhooks.md',
  'docs/sandbox.md',
  'docs/mock.md',
  'docs/refunds.md',
];

/** The anchors of a Markdown page's headings, as the docs site makes them (scripts/docs-site.ts). */
function anchorsOf(markdown: string): Set<string> {
  const slug = (text: string) =>
    text.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!.replace(/`/g, ''))));
}

describe('words for integrators', () => {
  it('no string of src/ (error text, help, log lines) names a decision number', () => {
    const offending: string[] = [];
    for (const path of files(join(ROOT, 'src'))) {
      for (const { line, text } of stringsOf(path, readFileSync(path, 'utf8'))) {
        // The SQLSTATE 3D000 (no such database) is a code, not a decision.
        if (DECISION.test(text) && !/^3D000$/.test(text)) offending.push(`${relative(ROOT, path)}:${line}: ${text}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('the scan finds a decision number where there is one', () => {
    const strings = stringsOf('x.ts', "const a = 'fine'; const b = `44 characters (D28) of ${a}`; // D12 in a comment\n");
    expect(strings.filter(({ text }) => DECISION.test(text))).toEqual([{ line: 1, text: '44 characters (D28) of ' }]);
  });

  it('no guide for integrators names a decision number; it links to the reason instead', () => {
    for (const page of INTEGRATOR_PAGES) {
      const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
      const offending = lines.map((text, index) => ({ text, line: index + 1 })).filter(({ text }) => DECISION.test(text.replace(/\]\([^)]*\)/g, '](...)')));
      expect(offending.map(({ line, text }) => `${page}:${line}: ${text}`)).toEqual([]);
    }
  });

  it('every link to a reason lands on a heading of the decision records', () => {
    const records = {
      'decisions.md': anchorsOf(readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8')),
      'code-decisions.md': anchorsOf(readFileSync(join(ROOT, 'docs/code-decisions.md'), 'utf8')),
    };
    let links = 0;
    for (const page of INTEGRATOR_PAGES) {
      for (const match of readFileSync(join(ROOT, page), 'utf8').matchAll(/\]\((?:[./]*docs\/|\.\.\/\.\.\/docs\/)?((?:code-)?decisions\.md)#([^)]+)\)/g)) {
        links += 1;
        expect(records[match[1] as keyof typeof records].has(match[2]!), `${page}: ${match[0]}`).toBe(true);
      }
    }
    expect(links).toBeGreaterThan(50);
  });
});
