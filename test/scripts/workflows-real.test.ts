/**
 * The workflows run as against a real implementation (`--real`: the sandbox controls unused) on an
 * in-process sandbox with credentials given as an implementer gives them: every step that follows
 * a user's action is skipped with its reason, the rest passes, and the merchant's verification is
 * waited for by polling (the sandbox's clock then follows real time: about 5 s). In the slow group
 * for that wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflows, serversOf } from '../../scripts/workflows/run.js';
import { SKIP_CONTROL_REASON, SKIP_REASON } from '../../scripts/workflows/report.js';
import { TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

describe('the workflows against a real implementation', () => {
  let sandbox: TestSandbox;

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it(
    'skip the steps that need a user action, each with its reason, and pass the others',
    async () => {
      const report = await runWorkflows({
        servers: serversOf([sandbox.url]),
        sandbox: false,
        merchantApi: TEST_CREDENTIALS.merchantApi,
        extras: TEST_CREDENTIALS.extras,
        partnerId: TEST_CREDENTIALS.partner.id,
        privateKey: TEST_CREDENTIALS.partner.privateKey,
      });
      expect(report.sandbox).toBe(false);
      expect(report.notes).toEqual([]);
      const failures = report.workflows.flatMap((workflow) => workflow.steps.filter((step) => step.status === 'fail').map((step) => `${workflow.workflowId}/${step.stepId}: ${step.message}`));
      expect(failures).toEqual([]);
      const steps = report.workflows.flatMap((workflow) => workflow.steps.map((step) => ({ ...step, workflowId: workflow.workflowId })));
      for (const step of steps.filter((one) => one.operation.startsWith('sandbox.'))) {
        expect(step, `${step.workflowId}/${step.stepId}`).toMatchObject({ status: 'skip', message: SKIP_CONTROL_REASON });
      }
      const skippedOperations = steps.filter((step) => step.status === 'skip' && step.message === SKIP_REASON).map((step) => step.stepId);
      expect(skippedOperations).toEqual(expect.arrayContaining(['rightOtp', 'partialRefund', 'statusAfterConfirmation', 'webStatusAfterTheUser']));
      // What needs no user runs in full: onboarding (polled until enabled), the extras, the initiations.
      const passed = steps.filter((step) => step.status === 'pass').map((step) => step.stepId);
      expect(passed).toEqual(expect.arrayContaining(['readEnabledMerchant', 'useTransactionalCredentials', 'readStage', 'pushDataArray', 'webStatusBeforeTheUser', 'initiateAgain']));
      expect(report.skippedSteps).toBe(steps.filter((step) => step.status === 'skip').length);
    },
    120_000,
  );
});
