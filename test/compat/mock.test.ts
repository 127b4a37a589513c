/**
 * The same flows against the Prism mock of the web and gateway documents: the mock keeps no state,
 * so only the integrations' calls are played (the shopper, the payment gateway and webhooks are
 * left out) and each answer is judged on its status code and on the presence and type of the
 * fields the integration reads. The mock answers the documented examples, so this proves that
 * what the contract documents is what the integrations accept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOWS } from './flows.js';
import { formatReport } from './replayer.js';
import { playOnMock, startMockTarget, type RunningTarget } from './targets.js';

describe('the integrations in the field, against the Prism mock', () => {
  let mock: RunningTarget;
  beforeAll(async () => {
    mock = await startMockTarget();
  });
  afterAll(async () => {
    await mock?.close();
  });

  for (const flow of FLOWS.filter((candidate) => candidate.sandboxOnly === undefined)) {
    it(flow.title, async () => {
      const report = await playOnMock(flow, mock);
      expect(report.passed, formatReport(report)).toBe(true);
      expect(report.steps.some((step) => step.result === 'passed'), 'at least one call was judged').toBe(true);
    });
  }
});
