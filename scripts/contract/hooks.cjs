'use strict';
/**
 * The Dredd hook file of the contract kit. Dredd loads it with `require` (so it is CommonJS) and
 * calls every hook with a callback, the only form Dredd 14 waits for.
 *
 *   beforeAll             stateful setup against a real server (nothing against a mock)
 *   beforeEach            per transaction: plan how to cause its response code, change the request,
 *                         then put the credentials on it as the very last step (signatures cover
 *                         the exact body and path that Dredd sends)
 *   beforeEachValidation  the kit's own response check (status, Content-Type, body against the
 *                         schema with Ajv 2020-12); a problem sets `transaction.fail`
 *
 * Settings come from the environment (scripts/contract/settings.cjs). Skip reasons and problems
 * are recorded for the driver (scripts/contract/registry.cjs) and logged with `hooks.log`.
 */
const hooks = require('hooks');
const { readSettings } = require('./settings.cjs');
const { ResponseChecker, header } = require('./response-check.cjs');
const { Kit, NeedError } = require('./kit.cjs');
const { registry } = require('./registry.cjs');
const { mockPlan, genericPlan, isInvalidRequest, PROXY_SKIP } = require('./plans.cjs');
const edit = require('./request-edit.cjs');

const report = registry();
let settings;
let checker;
let kit;
let family;
try {
  settings = readSettings(process.env);
  checker = new ResponseChecker(settings.document);
  kit = new Kit(settings, checker, (text) => hooks.log(text));
  // eslint-disable-next-line import/no-dynamic-require
  family = require(`./families/${settings.family}.cjs`);
} catch (error) {
  // Dredd only logs a warning for a hook file that throws and runs without it; the driver
  // stops the run when the hooks did not load.
  report.hooksError = error && error.stack ? error.stack : String(error);
  throw error;
}

/** (path, method, status, media type) of a transaction, from what Dredd compiled. */
function describe(transaction) {
  const origin = transaction.origin || {};
  const parts = String(origin.exampleName || '').split(' > ');
  const mediaType = parts[1] || header(transaction.expected.headers, 'content-type');
  return {
    name: transaction.name,
    path: origin.resourceName,
    method: transaction.request.method,
    status: String(transaction.expected.statusCode),
    mediaType: mediaType ? String(mediaType).split(';')[0].trim() : undefined,
  };
}

function skip(transaction, reason) {
  transaction.skip = true;
  report.skips.set(transaction.name, reason);
  hooks.log(`skipped ${transaction.name}: ${reason}`);
}

function fail(transaction, problems) {
  transaction.fail = problems.join('; ');
  report.problems.set(transaction.name, problems);
}

async function prepare(transaction) {
  const op = describe(transaction);
  transaction.paylater = op;
  // Dredd would compare the body with the document's first example (keys only), so an optional
  // field missing from a real body fails, and the Content-Type value exactly, so
  // `application/json; charset=utf-8` fails. The kit checks the schema and the media type instead;
  // Dredd still checks the status code.
  delete transaction.expected.body;
  delete transaction.expected.bodySchema;
  transaction.expected.headers = {};

  let plan;
  try {
    if (settings.mock) {
      plan = (family.mockPlan && family.mockPlan(kit, op)) || mockPlan(op);
    } else {
      plan = (await family.plan(kit, op, transaction)) || genericPlan(kit, op);
    }
  } catch (error) {
    if (error instanceof NeedError) {
      fail(transaction, [`${op.status}: ${error.message}`]);
      return;
    }
    throw error;
  }
  if (!plan.skip && settings.proxy && isInvalidRequest(op, plan)) plan = { skip: `${op.status}: ${PROXY_SKIP}` };
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
  family.authenticate(kit, transaction, op, plan.auth || 'valid');
}

hooks.beforeAll(function beforeAll(transactions, done) {
  if (settings.mock || typeof family.setup !== 'function') {
    done();
    return;
  }
  family.setup(kit).then(
    () => {
      for (const [key, reason] of Object.entries(kit.missing)) report.setupNotes.push(`${key}: ${reason}`);
      done();
    },
    (error) => {
      kit.setupError = error && error.message ? error.message : String(error);
      report.setupNotes.push(`setup failed: ${kit.setupError}`);
      hooks.log(`setup failed: ${kit.setupError}`);
      done();
    },
  );
});

hooks.beforeEach(function beforeEach(transaction, done) {
  prepare(transaction).then(
    () => done(),
    (error) => {
      fail(transaction, [`the kit could not prepare the request: ${error && error.stack ? error.stack : error}`]);
      done();
    },
  );
});

hooks.beforeEachValidation(function beforeEachValidation(transaction, done) {
  try {
    const op = transaction.paylater;
    if (op) {
      const problems = checker.check(op, transaction.real);
      // `prism proxy --errors` names each contract violation it saw in this header.
      const violations = transaction.real && header(transaction.real.headers, 'sl-violations');
      if (violations) problems.unshift(`the proxy reports contract violations: ${violations}`);
      if (problems.length === 0 && typeof op.check === 'function') problems.push(...op.check(transaction.real));
      if (problems.length > 0) fail(transaction, problems);
    }
  } catch (error) {
    fail(transaction, [`the kit's response check failed: ${error && error.message ? error.message : error}`]);
  }
  done();
});

report.hooksLoaded = true;
