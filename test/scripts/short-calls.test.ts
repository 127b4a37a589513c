/**
 * The short calls the reference shows first (scripts/samples/short.ts; the complete programs stay
 * in the bundles and run in test/samples/): every operation has one per language, naming the
 * operation, its method and path, its credentials from the environment and, in the signed families,
 * the signature recipe; each is a fraction of the complete program. test/samples/short-calls.test.ts
 * runs some of them as shown.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplePlans, type OperationPlan } from '../../scripts/samples/plan.js';
import { shortCall, withShortCalls } from '../../scripts/samples/short.js';
import { FAMILIES } from '../../src/contract/index.js';

const root = resolve(import.meta.dirname, '..', '..');
const LABELS = ['curl', 'Node', 'PHP', 'Python'] as const;
const bundles = Object.fromEntries(FAMILIES.map((family) => [family, JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8'))]));
const plans = FAMILIES.flatMap((family) => samplePlans(family, bundles[family]).filter((plan): plan is OperationPlan => plan.kind === 'operation'));

describe('the short calls', () => {
  it.each(plans.map((plan) => [plan.operationId, plan] as const))('%s: one per language, the request itself with its credentials', (_id, plan) => {
    const step = plan.steps.at(-1)!;
    for (const label of LABELS) {
      const source = shortCall(plan, label);
      expect(source, label).toContain(`(${plan.operationId})`);
      expect(source, label).toContain(step.path.split('{')[0]);
      expect(source, label).toContain(step.method);
      if (step.auth === 'web' || step.auth === 'sdk') expect(source, label).toMatch(/PAYLATER_PRIVATE_KEY/);
      if (step.auth === 'merchantApi') expect(source, label).toContain('PAYLATER_MERCHANT_API_USERNAME');
      if (step.auth === 'transactional') expect(source, label).toContain('PAYLATER_TRANSACTIONAL_PASSWORD');
      if (label !== 'Node' && (step.auth === 'web' || step.auth === 'sdk')) expect(source, label).toMatch(/sha256/);
      expect(source).not.toContain('${run}');
    }
  });

  it('the reference copy shows the short calls in the tabs and keeps every complete program in the description', () => {
    const copy = withShortCalls('web', bundles.web);
    const operation = copy.paths['/api/transaction'].post;
    const original = bundles.web.paths['/api/transaction'].post;
    expect(operation['x-codeSamples'].map((s: { label: string }) => s.label)).toEqual([...LABELS]);
    for (const [index, sample] of original['x-codeSamples'].entries()) {
      expect(operation['x-codeSamples'][index].source.split('\n').length * 2).toBeLessThan(sample.source.split('\n').length);
      expect(operation.description).toContain(sample.source.trimEnd());
    }
    expect(bundles.web.paths['/api/transaction'].post['x-codeSamples']).toEqual(original['x-codeSamples']);
  });
});
