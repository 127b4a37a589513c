/**
 * Every workflow of openapi/workflows/ run by `redocly respect` (through scripts/workflows/run.ts)
 * against an in-process sandbox on a free port: all pass against a fresh sandbox with its test
 * credentials, and they fail against a sandbox started with other keys (the runner can fail). The
 * real-implementation mode (the sandbox controls unused) is in test/scripts/workflows-real.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflows, serversOf, type WorkflowsReport } from '../../scripts/workflows/run.js';
import { readWorkflows } from '../../scripts/workflows/documents.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

const RUN_TIMEOUT_MS = 120_000;
const OTHER_KEYS = {
  merchantApi: { username: 'pg_other', password: 'pg_other_secret' },
  extras: { username: 'extras_other', password: 'extras_other_secret' },
  partner: { id: 'partner_other', privateKey: 'other_private_key' },
};

describe('the workflows against the sandbox', () => {
  let fresh: TestSandbox;
  let otherKeys: TestSandbox;

  beforeAll(async () => {
    [fresh, otherKeys] = await Promise.all([startSandbox(), startSandbox({ config: OTHER_KEYS })]);
  });
  afterAll(async () => {
    await Promise.all([fresh?.close(), otherKeys?.close()]);
  });

  it(
    'all pass against a fresh sandbox, every step run, the sandbox detected by its clock',
    async () => {
      const report: WorkflowsReport = await runWorkflows({ servers: serversOf([fresh.url]) });
      const failures = report.workflows.flatMap((workflow) =>
        workflow.steps.filter((step) => step.status !== 'pass').map((step) => `${workflow.workflowId}/${step.stepId}: ${step.message}`),
      );
      expect(failures).toEqual([]);
      expect(report.sandbox).toBe(true);
      expect(report.failed).toBe(0);
      expect(report.passed).toBe(readWorkflows().length);
      expect(report.skippedSteps).toBe(0);
      expect(report.notes.join('\n')).toContain("the sandbox's published test credentials");
      expect(fresh.loggedErrors).toEqual([]);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'fail against a sandbox started with other keys, each failure saying what the server answered',
    async () => {
      const report = await runWorkflows({ servers: serversOf([otherKeys.url]) });
      expect(report.sandbox).toBe(true);
      expect(report.passed).toBe(0);
      expect(report.failed).toBe(readWorkflows().length);
      const firstSteps = report.workflows.map((workflow) => workflow.steps.find((step) => step.status === 'fail'));
      for (const step of firstSteps) expect(step?.message).toBeDefined();
      const answered = firstSteps.map((step) => /^answered (\d{3})/.exec(step?.message ?? '')?.[1]);
      // The first request of each family with credentials is refused: 401.
      expect(answered.filter((code) => code === '401').length).toBeGreaterThanOrEqual(4);
      const text = JSON.stringify(report);
      for (const secret of ['test_private_key', 'pg_test_secret', 'extras_test_secret']) expect(text).not.toContain(secret);
    },
    RUN_TIMEOUT_MS,
  );
});
