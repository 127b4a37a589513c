/**
 * The Arazzo documents of the workflows (`openapi/workflows/*.arazzo.yaml`), read as data: the
 * workflows and their steps, each with the operation it calls. The runner reports the steps a run
 * did not reach from this list, and the docs site renders it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

const root = resolve(import.meta.dirname, '..', '..');

/** Where the Arazzo documents live. */
export const WORKFLOWS_DIR = join(root, 'openapi', 'workflows');

/** The order the runner runs them in: the gateway first (it moves the sandbox's clock the least late). */
const FILE_ORDER = ['gateway', 'extras', 'web', 'sdk'];

export interface WorkflowStep {
  stepId: string;
  description: string | undefined;
  /** The source description the operation belongs to (`gateway`, ..., or `sandbox` for the controls). */
  source: string;
  /** The operationId within that source. */
  operationId: string;
}

export interface Workflow {
  /** The file name, e.g. `gateway.arazzo.yaml`. */
  file: string;
  workflowId: string;
  summary: string;
  description: string;
  steps: WorkflowStep[];
}

interface RawStep {
  stepId?: unknown;
  description?: unknown;
  operationId?: unknown;
}

interface RawWorkflow {
  workflowId?: unknown;
  summary?: unknown;
  description?: unknown;
  steps?: RawStep[];
}

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** `$sourceDescriptions.<source>.<operationId>` split into its parts. */
function splitOperation(operationId: string): { source: string; operationId: string } {
  const match = /^\$sourceDescriptions\.([A-Za-z0-9_-]+)\.(.+)$/.exec(operationId);
  if (match === null) throw new Error(`a workflow step must name its operation as $sourceDescriptions.<source>.<operationId> (got ${operationId})`);
  return { source: match[1]!, operationId: match[2]! };
}

/** The Arazzo files, in run order. */
export function workflowFiles(dir: string = WORKFLOWS_DIR): string[] {
  const rank = (file: string) => {
    const index = FILE_ORDER.indexOf(file.replace(/\.arazzo\.yaml$/, ''));
    return index === -1 ? FILE_ORDER.length : index;
  };
  return readdirSync(dir)
    .filter((file) => file.endsWith('.arazzo.yaml'))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** Every workflow of every document, in run order. */
export function readWorkflows(dir: string = WORKFLOWS_DIR): Workflow[] {
  const workflows: Workflow[] = [];
  for (const file of workflowFiles(dir)) {
    const document = parse(readFileSync(join(dir, file), 'utf8')) as { workflows?: RawWorkflow[] };
    for (const raw of document.workflows ?? []) {
      workflows.push({
        file,
        workflowId: text(raw.workflowId),
        summary: text(raw.summary),
        description: text(raw.description),
        steps: (raw.steps ?? []).map((step) => ({
          stepId: text(step.stepId),
          description: text(step.description) || undefined,
          ...splitOperation(text(step.operationId)),
        })),
      });
    }
  }
  return workflows;
}
