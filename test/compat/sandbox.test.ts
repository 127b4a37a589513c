/**
 * The live service's own integrations (test/compat/integrations.ts) play their complete flows
 * (test/compat/flows.ts) against the sandbox, each request sent byte for byte as they send it and
 * each answer judged as they judge it. A failure names the integration, the step and what the
 * integration would have done. docs/compatibility.md describes the suite.
 */
import { describe, expect, it } from 'vitest';
import { FLOWS } from './flows.js';
import { formatReport } from './replayer.js';
import { playOnSandbox } from './targets.js';

describe('the integrations in the field, against the sandbox', () => {
  for (const flow of FLOWS) {
    it(flow.title, async () => {
      const { report, loggedErrors } = await playOnSandbox(flow);
      expect(report.passed, formatReport(report)).toBe(true);
      expect(loggedErrors).toEqual([]);
    });
  }
});
