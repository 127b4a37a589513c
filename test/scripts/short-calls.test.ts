/**
 * The short calls the reference shows first (scripts/samples/short.ts; the complete programs stay
 * in the bundles and run in test/samples/): every operation has one per language, naming the
 * operation, its method and path, its credentials from the environment with the sandbox's test
 * values as defaults, its own ids (no placeholder left to fill in), a line saying what to change
 * for live and, in the signed families, the signature recipe; each is shorter than the complete
 * program. test/samples/short-calls.test.ts runs every one of them as pasted.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplePlans, type OperationPlan } from '../../scripts/samples/plan.js';
import { shortCall, shortPlan, withShortCalls } from '../../scripts/samples/short.js';
import { FAMILIES } from '../../src/contract/index.js';

const root = resolve(import.meta.dirname, '..', '..');
const LABELS = ['curl', 'Node', 'PHP', 'Python'] as const;
const bundles = Object.fromEntries(FAMILIES.map((family) => [family, JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8'))]));
const plans = FAMILIES.flatMap((family) => samplePlans(family, bundles[family]).filter((plan): plan is OperationPlan => plan.kind === 'operation'));

describe('the short calls', () => {
  it.each(plans.map((plan) => [plan.operationId, plan] as const))('%s: one per language, runnable as it is, with its credentials and ids', (_id, plan) => {
    const step = plan.steps.at(-1)!;
    for (const label of LABELS) {
      const source = shortCall(plan, label);
      expect(source, label).toContain(`(${plan.operationId})`);
      expect(source, label).toContain(step.path.split('{')[0]);
      if (step.auth !== 'none') expect(source, label).toContain(step.method);
      expect(source, label).toContain('PAYLATER_BASE_URL');
      expect(source, label).toContain('For live: set PAYLATER_BASE_URL');
      if (step.auth === 'web' || step.auth === 'sdk') expect(source, label).toMatch(/PAYLATER_PRIVATE_KEY\b.*test_private_key/);
      if (step.auth === 'merchantApi') expect(source, label).toMatch(/PAYLATER_MERCHANT_API_USERNAME\b.*pg_test/);
      if (step.auth === 'transactional') expect(source, label).toMatch(/PAYLATER_TRANSACTIONAL_PASSWORD\b.*testPrivateKey/);
      if (label !== 'Node' && (step.auth === 'web' || step.auth === 'sdk')) expect(source, label).toMatch(/sha256/);
      // No placeholder to fill in: the ids are made (a random suffix) or read from the set-up's answers.
      expect(source, label).not.toMatch(/<[a-z][A-Za-z]*>/);
      if (shortPlan(plan).vars.length > 0) expect(source, label).toMatch(/rand|random|token_hex/);
    }
  });

  it('the reference copy shows the short calls in the tabs and keeps every complete program in the description', () => {
    const copy = withShortCalls('web', bundles.web);
    const operation = copy.paths['/api/transaction'].post;
    const original = bundles.web.paths['/api/transaction'].post;
    expect(operation['x-codeSamples'].map((s: { label: string }) => s.label)).toEqual([...LABELS]);
    for (const [index, sample] of original['x-codeSamples'].entries()) {
      expect(operation['x-codeSamples'][index].source.split('\n').length).toBeLessThan(sample.source.split('\n').length);
      expect(operation.description).toContain(sample.source.trimEnd());
    }
    expect(bundles.web.paths['/api/transaction'].post['x-codeSamples']).toEqual(original['x-codeSamples']);
  });
});
