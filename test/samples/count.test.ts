/**
 * The code samples the bundles carry (`x-codeSamples`): every operation and every webhook of the
 * four documents has one per language, in the same order, each a program of its own made by the
 * generator from the current contract (the per-language files run them: curl.test.ts, node.test.ts,
 * php.test.ts, python.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../scripts/families.js';
import { WEBHOOK_EVENTS } from '../../src/contract/webhooks.js';
import { withCodeSamples } from '../../scripts/samples/index.js';
import { LABELS, ROOT, bundledSamples } from './support.js';

const { samples, entries } = bundledSamples();

describe('the code samples in the bundles', () => {
  it('give every operation and webhook of the four documents one sample per language', () => {
    const operations = entries.filter((entry) => entry.kind === 'operation');
    const webhooks = entries.filter((entry) => entry.kind === 'webhook');
    expect(operations).toHaveLength(25);
    expect(webhooks).toHaveLength(WEBHOOK_EVENTS.length);
    expect(WEBHOOK_EVENTS.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.labels, `${entry.family} ${entry.operationId}`).toEqual([...LABELS]);
    expect(samples).toHaveLength((25 + WEBHOOK_EVENTS.length) * LABELS.length);
  });

  it('name their language for the highlighting and hold a program that names its operation', () => {
    const langs = { curl: 'Shell', Node: 'JavaScript', PHP: 'PHP', Python: 'Python' } as Record<string, string>;
    for (const sample of samples) {
      expect(sample.lang, sample.label).toBe(langs[sample.label]);
      expect(sample.source, `${sample.operationId} ${sample.label}`).toContain(`(${sample.operationId})`);
    }
  });

  it('sign with the published test key, read from the environment, and never with another secret', () => {
    for (const sample of samples.filter((entry) => ['web', 'sdk'].includes(entry.family) && entry.operationId !== 'downloadBrowserScript')) {
      expect(sample.source, `${sample.operationId} ${sample.label}`).toContain('PAYLATER_PRIVATE_KEY');
      expect(sample.source).toContain('test_private_key');
    }
    for (const sample of samples.filter((entry) => entry.family === 'gateway' && entry.kind === 'webhook')) {
      expect(sample.source, `${sample.operationId} ${sample.label}`).toContain('PAYLATER_TRANSACTIONAL_PASSWORD');
      expect(sample.source).not.toContain('test_private_key');
    }
  });

  it('compare signatures in constant time in the receivers', () => {
    const constantTime: Record<string, RegExp> = {
      curl: /openssl dgst -sha256 -hmac "\$nonce"/,
      Node: /createWebhookHandler\(/,
      PHP: /hash_equals\(\$expected, \$_SERVER\['HTTP_X_SIGNATURE'\]/,
      Python: /hmac\.compare_digest\(signature\(raw\)/,
    };
    for (const sample of samples.filter((entry) => entry.kind === 'webhook')) {
      expect(sample.source, `${sample.family} ${sample.webhook} ${sample.label}`).toMatch(constantTime[sample.label]!);
    }
  });

  it('are what the generator makes of the current documents', () => {
    for (const family of FAMILIES) {
      const bundle = JSON.parse(readFileSync(join(ROOT, 'generated', 'openapi', `${family}.json`), 'utf8'));
      expect(withCodeSamples(family, bundle), family).toEqual(bundle);
    }
  });
});
