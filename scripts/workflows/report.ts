/**
 * What a run of the workflows gave, step by step: built from `redocly respect`'s JSON log
 * (`--json-output`) and the documents' list of steps, so that a step the run did not reach is
 * reported too: as skipped, with the reason, against a real implementation; as a failure against
 * the sandbox, where every step must run.
 */
import type { Workflow } from './documents.js';

type StepStatus = 'pass' | 'fail' | 'skip';

interface StepResult {
  stepId: string;
  /** `<source>.<operationId>`, e.g. `gateway.createMerchant` or `sandbox.advanceClock`. */
  operation: string;
  status: StepStatus;
  /** What was wrong (failures), or why it was not run (skips). */
  message?: string;
  /** How many times it was sent (more than once when a retry polled). */
  attempts: number;
}

export interface WorkflowResult {
  file: string;
  workflowId: string;
  status: 'pass' | 'fail';
  steps: StepResult[];
  /** Why the workflow failed when no step did (respect's own verdict). */
  message?: string;
}

/** The reason of a step a real implementation does not reach. */
export const SKIP_REASON =
  'not run against a real implementation: it follows a user action or a wait that only the sandbox controls play (OTP, confirmation, clock)';
/** The reason of a sandbox control not run against a real implementation. */
export const SKIP_CONTROL_REASON = 'a sandbox control (no part of the contract): a real implementation has none';

interface LoggedCheck {
  name?: string;
  condition?: string;
  passed?: boolean;
  message?: string;
  severity?: string;
}

interface LoggedStep {
  type?: string;
  stepId?: string;
  workflowId?: string;
  status?: string;
  checks?: LoggedCheck[];
  response?: { statusCode?: number };
  executedSteps?: LoggedStep[];
}

interface LoggedWorkflow extends LoggedStep {
  workflowId?: string;
  status?: string;
}

/** The shape of respect's `--json-output` that is read here. */
export interface RespectLog {
  files?: Record<string, { executedWorkflows?: LoggedWorkflow[] }>;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const MAX_MESSAGE = 400;

/**
 * One line of a failed check, without colour codes: a success criterion by its condition (and why
 * it could not be evaluated, when that is the reason), any other check by its name and message.
 */
function describeCheck(check: LoggedCheck): string {
  const message = (check.message ?? '').replace(ANSI, '').trim().split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
  let text: string;
  if (check.condition !== undefined && check.name === 'success criteria check') {
    const reason = /Error in resolving runtime expression '.*?': (.*)$/.exec(message)?.[1];
    text = `not met: ${check.condition}${reason ? ` (${reason})` : ''}`;
  } else text = message === '' ? (check.name ?? 'check') : `${check.name ?? 'check'}: ${message}`;
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}...` : text;
}

/** Every step execution of a workflow, in order, with the `goto` continuations flattened. */
function flatten(steps: LoggedStep[] | undefined, into: LoggedStep[] = []): LoggedStep[] {
  for (const step of steps ?? []) {
    if (step.type === 'workflow') flatten(step.executedSteps, into);
    else into.push(step);
  }
  return into;
}

/** The results of every workflow of `workflows`, from respect's log of the run. */
export function buildResults(workflows: readonly Workflow[], log: RespectLog, sandbox: boolean): WorkflowResult[] {
  const logged = new Map<string, LoggedWorkflow>();
  for (const [path, file] of Object.entries(log.files ?? {})) {
    const name = path.split(/[\\/]/).pop() ?? path;
    for (const workflow of file.executedWorkflows ?? []) logged.set(`${name}#${workflow.workflowId ?? ''}`, workflow);
  }
  return workflows.map((workflow) => {
    const run = logged.get(`${workflow.file}#${workflow.workflowId}`);
    const executions = flatten(run?.executedSteps);
    const steps: StepResult[] = workflow.steps.map((step) => {
      const operation = `${step.source}.${step.operationId}`;
      const mine = executions.filter((execution) => execution.stepId === step.stepId);
      const last = mine.at(-1);
      if (last === undefined) {
        if (run === undefined) return { stepId: step.stepId, operation, status: 'fail', message: 'the workflow did not run', attempts: 0 };
        if (!sandbox) {
          const message = step.source === 'sandbox' ? SKIP_CONTROL_REASON : SKIP_REASON;
          return { stepId: step.stepId, operation, status: 'skip', message, attempts: 0 };
        }
        return { stepId: step.stepId, operation, status: 'fail', message: 'not reached: an earlier step ended the workflow', attempts: 0 };
      }
      const failed = (last.checks ?? []).filter((check) => check.passed === false && check.severity !== 'warn' && check.severity !== 'off');
      if (last.status === 'success' && failed.length === 0) return { stepId: step.stepId, operation, status: 'pass', attempts: mine.length };
      const checks = failed.length > 0 ? failed.map(describeCheck).join('; ') : `respect reported the step as ${last.status ?? 'not passed'}`;
      const code = last.response?.statusCode;
      const message = typeof code === 'number' && code > 0 ? `answered ${code}; ${checks}` : checks;
      return { stepId: step.stepId, operation, status: 'fail', message, attempts: mine.length };
    });
    const base = { file: workflow.file, workflowId: workflow.workflowId, steps };
    if (steps.some((step) => step.status === 'fail')) return { ...base, status: 'fail' };
    if (run !== undefined && run.status !== 'success' && run.status !== 'warning') {
      return { ...base, status: 'fail', message: `respect reported the workflow as ${run.status ?? 'not passed'}` };
    }
    return { ...base, status: 'pass' };
  });
}
