/**
 * The Dredd hook file of the contract kit. ./run.ts bundles it (with esbuild) into a CommonJS file
 * that Dredd loads with `require`; Dredd calls every hook with a callback, the only form Dredd 14
 * waits for.
 *
 *   beforeAll             stateful setup against a real server (nothing against a mock)
 *   beforeEach            per transaction: plan how to cause its response code, change the request,
 *                         then put the credentials on it as the very last step (signatures cover
 *                         the exact body and path that Dredd sends)
 *   beforeEachValidation  the kit's own response check (status, Content-Type, body against the
 *                         schema, by the contract model); a problem sets `transaction.fail`
 *
 * Settings come from the environment (./settings.ts). Skip reasons and problems are recorded for
 * the driver (./registry.ts) and logged with `hooks.log`.
 */
import hooks from 'hooks';
import { contractOf } from '../../src/contract/index.js';
import { sdk, web } from './families/direct.js';
import * as extras from './families/extras.js';
import * as gateway from './families/gateway.js';
import { Kit, NeedError, type FamilyModule } from './kit.js';
import { mockPlan, PROXY_SKIP } from './plans.js';
import { registry } from './registry.js';
import * as edit from './request-edit.js';
import { checkResponse, header, mediaTypeOf } from './response-check.js';
import { readSettings, type Settings } from './settings.js';
import type { DreddTransaction, Operation, Plan } from './types.js';

const FAMILY_MODULES: Record<Settings['family'], FamilyModule> = { gateway, extras, web, sdk };

const report = registry();
let settings: Settings;
let kit: Kit;
let family: FamilyModule;
try {
  settings = readSettings(process.env);
  kit = new Kit(settings, contractOf(settings.family, settings.document));
  family = FAMILY_MODULES[settings.family];
} catch (error) {
  // Dredd only logs a warning for a hook file that throws and runs without it; the driver
  // stops the run when the hooks did not load.
  report.hooksError = error instanceof Error ? (error.stack ?? error.message) : String(error);
  throw error;
}

/** (path, method, status, media type) of a transaction, from what Dredd compiled. */
function describe(transaction: DreddTransaction): Operation {
  const origin = transaction.origin ?? {};
  const parts = String(origin.exampleName ?? '').split(' > ');
  const mediaType = parts[1] || header(transaction.expected.headers, 'content-type');
  return {
    name: transaction.name,
    path: origin.resourceName ?? '',
    method: transaction.request.method,
    status: String(transaction.expected.statusCode),
    mediaType: mediaType ? mediaTypeOf(mediaType) : undefined,
  };
}

function skip(transaction: DreddTransaction, reason: string): void {
  transaction.skip = true;
  report.skips.set(transaction.name, reason);
  hooks.log(`skipped ${transaction.name}: ${reason}`);
}

function fail(transaction: DreddTransaction, problems: string[]): void {
  transaction.fail = problems.join('; ');
  report.problems.set(transaction.name, problems);
}

function prepare(transaction: DreddTransaction): void {
  const op = describe(transaction);
  transaction.paylater = op;
  // Dredd would compare the body with the document's first example (keys only), so an optional
  // field missing from a real body fails, and the Content-Type value exactly, so
  // `application/json; charset=utf-8` fails. The kit checks the schema and the media type instead;
  // Dredd still checks the status code.
  delete transaction.expected.body;
  delete transaction.expected.bodySchema;
  transaction.expected.headers = {};

  let plan: Plan;
  try {
    plan = settings.mock ? mockPlan(op) : family.plan(kit, op);
  } catch (error) {
    if (error instanceof NeedError) {
      fail(transaction, [`${op.status}: ${error.message}`]);
      return;
    }
    throw error;
  }
  // Every 413, and the 400s that send a schema violation, break the contract on purpose.
  const invalid = plan.invalid === true || Number(op.status) === 413;
  if (!plan.skip && settings.proxy && invalid) plan = { skip: `${op.status}: ${PROXY_SKIP}` };
  if (plan.skip) {
    skip(transaction, plan.skip);
    return;
  }
  if (plan.edit) plan.edit(transaction);
  if (plan.prefer) edit.setHeader(transaction, 'Prefer', plan.prefer);
  op.expectCode = plan.expectCode;
  op.codeField = family.codeField;
  op.check = plan.check;
  // Last: the signature covers the final body and path.
  family.authenticate(kit, transaction, op, plan.auth ?? 'valid');
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

hooks.beforeAll((_transactions, done) => {
  if (settings.mock || typeof family.setup !== 'function') return done();
  family.setup(kit).then(
    () => {
      for (const [key, reason] of Object.entries(kit.missing)) report.setupNotes.push(`${key}: ${reason}`);
      done();
    },
    (error: unknown) => {
      kit.setupError = message(error);
      report.setupNotes.push(`setup failed: ${kit.setupError}`);
      hooks.log(`setup failed: ${kit.setupError}`);
      done();
    },
  );
});

hooks.beforeEach((transaction, done) => {
  try {
    prepare(transaction);
  } catch (error) {
    fail(transaction, [`the kit could not prepare the request: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`]);
  }
  done();
});

hooks.beforeEachValidation((transaction, done) => {
  try {
    const op = transaction.paylater;
    if (op) {
      const problems = checkResponse(kit.contract, op, transaction.real);
      // `prism proxy --errors` names each contract violation it saw in this header.
      const violations = transaction.real && header(transaction.real.headers, 'sl-violations');
      if (violations) problems.unshift(`the proxy reports contract violations: ${violations}`);
      if (problems.length === 0 && typeof op.check === 'function' && transaction.real) problems.push(...op.check(transaction.real));
      if (problems.length > 0) fail(transaction, problems);
    }
  } catch (error) {
    fail(transaction, [`the kit's response check failed: ${message(error)}`]);
  }
  done();
});

report.hooksLoaded = true;
