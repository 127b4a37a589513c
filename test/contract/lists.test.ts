/**
 * The families and the webhook events have one list each: the family table (src/contract/families.ts)
 * and the webhooks of the bundled documents (generated/webhooks.js, src/contract/webhooks.ts). Every
 * part that names families or events either derives from them or is checked here against them: the
 * documents' configuration, the verifier, the sandbox (its modules, page, stream and webhook
 * senders), `paylater listen` and `trigger`, the mock and the code samples.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/commands.js';
import { TRIGGER_EVENTS } from '../../src/cli/trigger-command.js';
import {
  contractOf,
  FAMILIES,
  familyInfo,
  WEBHOOK_EVENTS,
  WEBHOOK_FAMILIES,
  webhookEvents,
  type Family,
  type WebhookName,
} from '../../src/contract/index.js';
import type { SendWebhook } from '../../src/sandbox/webhook-events.js';
import { FAMILY_MODULES } from '../../src/sandbox/server.js';
import { sdkSignature, statusSignature } from '../../src/signature.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';
import { MOCK_PORTS } from '../../scripts/families.js';
import { samplePlans, type WebhookPlan } from '../../scripts/samples/plan.js';
import { useSandbox } from '../support/sandbox.js';

const root = join(import.meta.dirname, '..', '..');

type Json = Record<string, any>;

function bundle(family: Family): Json {
  return JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8'));
}

/** `true` only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// The gateway engine names its events in its own signature: it must name the contract's, no more.
const gatewayEventsAreTheContracts: Equal<Parameters<SendWebhook<'gateway'>>[0], WebhookName<'gateway'>> = true;

describe('the families', () => {
  it('are the documents of redocly.yaml and of the types configuration, in the same order', () => {
    for (const file of ['redocly.yaml', 'scripts/types.redocly.yaml']) {
      const config = parse(readFileSync(join(root, file), 'utf8')) as { apis: Record<string, unknown> };
      expect(Object.keys(config.apis), file).toEqual([...FAMILIES]);
    }
  });

  it('are each served by one sandbox module, and by nothing else', () => {
    expect(Object.keys(FAMILY_MODULES).sort()).toEqual([...FAMILIES].sort());
  });

  it('each have their own mock port', () => {
    expect(Object.keys(MOCK_PORTS)).toEqual([...FAMILIES]);
    expect(new Set(Object.values(MOCK_PORTS)).size).toBe(FAMILIES.length);
  });

  it.each(FAMILIES)("%s: the table's error format is the one its document's error answers use", (family) => {
    // apiError bodies carry errorCode (D02); messageError bodies carry message and detail (D03).
    const schemas = Object.keys(bundle(family).components?.schemas ?? {});
    const format = familyInfo(family).errorFormat;
    const [own, other] = format === 'apiError' ? ['ApiError', 'MessageError'] : ['MessageError', 'ApiError'];
    expect(schemas, `${family} is ${format}`).toContain(own);
    expect(schemas, `${family} is ${format}`).not.toContain(other);
  });
});

describe('the webhook events', () => {
  it('are the webhooks of the bundled documents, family by family (generated/webhooks.js is current)', () => {
    for (const family of FAMILIES) {
      const names = Object.keys(bundle(family).webhooks ?? {});
      const listed = WEBHOOK_FAMILIES.includes(family as never) ? webhookEvents(family as never).map(({ name }) => name) : [];
      expect(listed, family).toEqual(names);
    }
    expect(WEBHOOK_FAMILIES.length).toBeGreaterThan(0);
    expect(gatewayEventsAreTheContracts).toBe(true);
  });

  it.each(WEBHOOK_EVENTS.map((event) => [`${event.family} ${event.name}`, event] as const))(
    "%s: every example matches its own schema and no other webhook's of the family (the verifier tells them apart so)",
    (_label, event) => {
      const examples = Object.values<{ value: Json }>(
        bundle(event.family).webhooks[event.name][event.method.toLowerCase()].requestBody.content['application/json'].examples ?? {},
      );
      expect(examples.length, 'the document has an example').toBeGreaterThan(0);
      for (const { value } of examples) {
        const matching = webhookEvents(event.family).filter((other) => contractOf(event.family).webhook(other.name, other.method)!.checkBody(value).length === 0);
        expect(matching.map(({ name }) => name)).toEqual([event.name]);
      }
    },
  );

  it.each(WEBHOOK_EVENTS.map((event) => [`${event.family} ${event.name}`, event] as const))(
    "%s: the answers counted as received are the ones its responses list",
    (_label, event) => {
      const responses = Object.keys(bundle(event.family).webhooks[event.name][event.method.toLowerCase()].responses);
      const received = responses.filter((code) => /^[23]/.test(code)).sort();
      expect(received).toEqual({ 200: ['200'], '2xx': ['2XX'], '2xx-3xx': ['2XX', '3XX'] }[event.successStatus]);
    },
  );

  it.each(WEBHOOK_EVENTS.map((event) => [`${event.family} ${event.name}`, event] as const))(
    '%s: the verifier accepts its example, signed, as that event',
    (_label, event) => {
      const key = 'a-test-key';
      const webhook = contractOf(event.family).webhook(event.name, event.method);
      expect(webhook, 'the model knows it').toBeDefined();
      const examples = Object.values<{ value: Json }>(
        bundle(event.family).webhooks[event.name][event.method.toLowerCase()].requestBody.content['application/json'].examples ?? {},
      );
      expect(examples.length, 'the document has an example').toBeGreaterThan(0);
      const body = structuredClone(examples[0]!.value);
      if (event.family === 'web') body.signature = statusSignature(body.transactionId, body.status, key);
      const raw = JSON.stringify(body);
      const verified = verifyWebhook(event.family, raw, { 'content-type': 'application/json', 'x-signature': sdkSignature(raw, key) }, key);
      expect(verified.payload).toEqual(body);
      expect(verified.name).toBe(event.name);
      expect((verified as { kind?: string }).kind).toBe(event.envelope);
    },
  );

  it('each have a code sample receiver, which picks its own events and prints their ids', () => {
    for (const family of WEBHOOK_FAMILIES) {
      const plans = samplePlans(family, bundle(family)).filter((plan): plan is WebhookPlan => plan.kind === 'webhook');
      const events = webhookEvents(family);
      expect(plans.map(({ name, sharesUrl }) => ({ name, sharesUrl })), family).toEqual(events.map(({ name }) => ({ name, sharesUrl: events.length > 1 })));
      for (const plan of plans) expect(plan.print.length, plan.name).toBeGreaterThan(0);
    }
  });

  it('can each be followed with paylater listen --family, and triggered', () => {
    const listen = buildProgram().root.commands.find((command) => command.name() === 'listen');
    const help = (listen?.helpInformation() ?? '').replace(/\s+/g, ' ');
    expect(help).toContain(`--family ${WEBHOOK_FAMILIES.join(',')}`);
    expect(help).toContain(`separated by commas: ${WEBHOOK_FAMILIES.join(', ')}`);
    expect([...new Set(TRIGGER_EVENTS.map(({ family }) => family))].sort()).toEqual([...WEBHOOK_FAMILIES].sort());
  });
});

describe('the sandbox', () => {
  const t = useSandbox();

  it('routes the operations of every family and names each on its page', async () => {
    const routed = new Set(t.sandbox.routes.map(({ family }) => family));
    for (const family of FAMILIES) expect(routed.has(family), family).toBe(true);
    const page = await t.request('GET', '/');
    for (const family of FAMILIES) expect(page.text).toContain(familyInfo(family).label);
  });

  it('streams the events of every family with webhooks, and refuses a family without', async () => {
    for (const family of WEBHOOK_FAMILIES) {
      const stop = new AbortController();
      const response = await fetch(`${t.url}/sandbox/webhooks/stream?family=${family}`, { signal: stop.signal });
      expect(response.status, family).toBe(200);
      stop.abort();
      await response.body?.cancel().catch(() => undefined);
    }
    for (const family of FAMILIES.filter((name) => !WEBHOOK_FAMILIES.includes(name as never))) {
      const refused = await t.request('GET', `/sandbox/webhooks/stream?family=${family}`);
      expect(refused.status, family).toBe(400);
    }
  });
});
