/**
 * The contract-changes page: the differences between released documents, generated from the
 * documents themselves (src/contract/diff.ts), never written by hand.
 *
 * The released bundles are committed at release time under openapi/releases/<version>/<family>.json
 * (`cp generated/openapi/*.json openapi/releases/<version>/`), so that a clone without history, or a
 * shallow one, builds the same page; git history is not read. The page compares each release with
 * the next, and the newest release with the current documents (marked unreleased while no snapshot
 * of their version exists). A change that repeats across operations (a header added to every
 * answer) is one row listing the operations.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { diffDocuments, type ContractChange } from '../../src/contract/diff.js';
import { FAMILIES, type Family } from '../families.js';
import type { ExtraPage, PageContext } from './page.js';

type Documents = Map<Family, Record<string, unknown>>;

interface Version {
  label: string;
  documents: Documents;
}

/** The released versions under openapi/releases/, oldest first. */
export function releasedVersions(root: string): string[] {
  const dir = join(root, 'openapi', 'releases');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^\d+\.\d+\.\d+$/.test(name))
    .sort((a, b) => {
      const [x, y] = [a, b].map((v) => v.split('.').map(Number));
      return (x![0]! - y![0]!) || (x![1]! - y![1]!) || (x![2]! - y![2]!);
    });
}

function load(dir: string): Documents {
  const documents: Documents = new Map();
  for (const family of FAMILIES) {
    const file = join(dir, `${family}.json`);
    if (existsSync(file)) documents.set(family, JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  }
  return documents;
}

/** One row per distinct change; the operations it applies to, together. */
export function groupChanges(changes: ContractChange[]): { change: ContractChange; operations: string[] }[] {
  const rows = new Map<string, { change: ContractChange; operations: string[] }>();
  for (const change of changes) {
    const key = change.subject === 'operation' ? `${change.kind}\0${change.operation}` : `${change.kind}\0${change.subject}\0${change.detail ?? ''}`;
    const row = rows.get(key);
    if (row) row.operations.push(change.operation);
    else rows.set(key, { change, operations: [change.operation] });
  }
  return [...rows.values()];
}

function section(from: Version, to: Version, context: PageContext): string {
  const { escapeHtml } = context;
  const families = FAMILIES.map((family) => {
    const before = from.documents.get(family);
    const after = to.documents.get(family);
    if (!before || !after) return `<h3>${family}</h3>\n<p>Not in both versions.</p>`;
    const rows = groupChanges(diffDocuments(before, after));
    if (rows.length === 0) return `<h3 id="${escapeHtml(`${to.label}-${family}`)}">${family}</h3>\n<p>No difference in operations, parameters, fields, enums or status codes.</p>`;
    const body = rows
      .map(({ change, operations }) => {
        const where = operations.length > 3 ? `${operations.length} operations: ${operations.map((o) => `<code>${escapeHtml(o)}</code>`).join(', ')}` : operations.map((o) => `<code>${escapeHtml(o)}</code>`).join('<br>');
        return `<tr><td class="change-${change.kind}">${change.kind}</td><td>${change.subject === 'operation' ? 'the operation' : escapeHtml(change.subject)}</td><td>${escapeHtml(change.detail ?? '')}</td><td>${where}</td></tr>`;
      })
      .join('\n');
    return `<h3 id="${escapeHtml(`${to.label}-${family}`)}">${family}</h3>\n<table class="contract-changes">\n<thead><tr><th>change</th><th>what</th><th>detail</th><th>where</th></tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
  });
  return `<h2 id="${escapeHtml(to.label)}">${escapeHtml(from.label)} → ${escapeHtml(to.label)}</h2>\n${families.join('\n')}`;
}

function renderContractChanges(context: PageContext): string {
  const versions: Version[] = releasedVersions(context.root).map((label) => ({ label, documents: load(join(context.root, 'openapi', 'releases', label)) }));
  const current = load(context.documentsDir);
  const currentVersion = String((current.values().next().value?.info as Record<string, unknown> | undefined)?.version ?? 'current');
  if (!versions.some((v) => v.label === currentVersion)) versions.push({ label: `${currentVersion} (unreleased)`, documents: current });
  const sections: string[] = [];
  for (let index = versions.length - 1; index > 0; index--) sections.push(section(versions[index - 1]!, versions[index]!, context));
  return `<article class="guide">
<h1 id="contract-changes">Contract changes</h1>
<p>What changed in the four documents between releases, operation by operation: operations and
webhooks (with their callbacks), parameters, request and response fields with their types,
whether they are required and their enum values, and status codes. Generated by <code>npm run docs</code>
from the released documents (<code>openapi/releases/</code>) and the current ones; descriptions and
examples are not compared. The reasons are in the <a href="changelog.html">changelog</a>.</p>
${sections.length > 0 ? sections.join('\n') : '<p>No released documents to compare with yet.</p>'}
</article>`;
}

export const contractChangesPage: ExtraPage = {
  file: 'contract-changes.html',
  title: 'Contract changes',
  label: 'Contract changes',
  render: renderContractChanges,
};
