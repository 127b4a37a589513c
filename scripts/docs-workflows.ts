/**
 * The workflows page of the docs site: docs/workflows.md holds the prose, and the marker line
 * {@link WORKFLOWS_MARKER} in it is replaced, when the site is built, by every workflow of
 * `openapi/workflows/*.arazzo.yaml` as its steps, each linked to its operation in the API reference
 * (or, for a sandbox control, to the sandbox guide). So the page never lists a step the documents
 * do not have.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readWorkflows, type Workflow, type WorkflowStep } from './workflows/documents.js';
import { FAMILIES, isFamily, type Family } from './families.js';

const root = resolve(import.meta.dirname, '..');

/** The line of docs/workflows.md that the site replaces with the workflows. */
export const WORKFLOWS_MARKER = '<!-- workflows: rendered from openapi/workflows/*.arazzo.yaml when the site is built -->';

/** A route of the reference page as Redoc writes it: lower case, words joined by `-`. */
function routeSlug(text: string): string {
  return text.toLowerCase().trim().replace(/\s+/g, '-').replace(/[^a-z0-9-]/g, '');
}

/** operationId → the tag of the operation (its first), per family, from the bundled documents. */
function operationTags(documentsDir: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const family of FAMILIES) {
    const document = JSON.parse(readFileSync(join(documentsDir, `${family}.json`), 'utf8')) as {
      paths?: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
    };
    for (const item of Object.values(document.paths ?? {})) {
      for (const operation of Object.values(item)) {
        if (typeof operation?.operationId === 'string') tags.set(`${family}.${operation.operationId}`, operation.tags?.[0] ?? '');
      }
    }
  }
  return tags;
}

/** The link of a step's operation: `<family>.html#/<tag>/<operationid>`, or the sandbox guide's controls. */
export function operationLink(step: WorkflowStep, tags: Map<string, string>): string {
  if (!isFamily(step.source)) return 'sandbox.md#sandbox-only-endpoints';
  const tag = tags.get(`${step.source}.${step.operationId}`);
  if (tag === undefined) throw new Error(`${step.source}.${step.operationId} is not an operation of generated/openapi/${step.source}.json`);
  return `${step.source}.html#/${routeSlug(tag)}/${step.operationId.toLowerCase()}`;
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function renderWorkflow(workflow: Workflow, tags: Map<string, string>): string {
  const lines = [`### ${workflow.summary || workflow.workflowId}`, '', `\`${workflow.workflowId}\` in \`${workflow.file}\``, ''];
  if (workflow.description) lines.push(oneLine(workflow.description), '');
  workflow.steps.forEach((step, index) => {
    const family = isFamily(step.source) ? (step.source as Family) : undefined;
    const what = family
      ? `[\`${step.operationId}\`](${operationLink(step, tags)})`
      : `[\`${step.operationId}\`](${operationLink(step, tags)}) (sandbox control, skipped against a real implementation)`;
    const description = step.description ? `: ${oneLine(step.description)}` : '';
    lines.push(`${index + 1}. **${step.stepId}**, ${what}${description}`);
  });
  lines.push('');
  return lines.join('\n');
}

/** The Markdown of every workflow, grouped by document. */
export function renderWorkflows(workflows: readonly Workflow[] = readWorkflows(), documentsDir = join(root, 'generated', 'openapi')): string {
  const tags = operationTags(documentsDir);
  return workflows.map((workflow) => renderWorkflow(workflow, tags)).join('\n');
}

/** docs/workflows.md with its marker replaced by the workflows; any other guide unchanged. */
export function expandWorkflows(markdown: string, documentsDir?: string): string {
  return markdown.includes(WORKFLOWS_MARKER) ? markdown.replace(WORKFLOWS_MARKER, () => renderWorkflows(undefined, documentsDir)) : markdown;
}
