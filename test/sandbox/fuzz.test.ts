/**
 * Mutation fuzzing of the sandbox, every family. Each case starts from a request the bundled
 * document gives (an operation's request example, its path and query parameters, bound to state
 * the setup made: an enabled merchant, transactions in each step, SDK and web transactions) with
 * valid credentials, then mutates it with fast-check: wrong types, missing required fields, extra
 * fields, huge strings (under 1 MiB), huge, negative and fractional numbers, unicode, null bytes,
 * invalid JSON and UTF-8, deep nesting, wrong content types, unknown ids, bad query and path
 * parameters, and, in half of the cases, bad credentials (malformed, wrong or missing signatures,
 * wrong or missing Basic credentials, credentials of another kind). In the other half the mutated
 * request is signed correctly, so that the mutation reaches validation and the handlers.
 *
 * For EVERY answer: the status is below 500, it is documented for the operation, and the body is
 * valid for that status (the self-check of helpers.ts, `checkAgainstContract`); and the sandbox
 * logs no unexpected error.
 *
 * `npm test` sends 1,500 such requests; the slow group (fuzz-volume.test.ts) 10,000 more from another
 * seed.
 *
 * Reproduce: the cases are a pure function of the seed (FUZZ_SEED, printed on failure). The state
 * they run against depends a little on the order in which concurrent requests land; to replay one
 * case alone after the same setup, FUZZ_ONLY=<case index>. FUZZ_REQUESTS changes the count.
 */
import { describe, expect, it } from 'vitest';
import { expectFuzzClean, fuzzSandbox, QUICK_RUN } from '../support/fuzz.js';

const fuzz = fuzzSandbox();

describe('fuzzing every family', () => {
  it(`answers ${QUICK_RUN.count} mutated requests with documented statuses and bodies, never 5xx (seed ${QUICK_RUN.seed})`, async () => {
    await expectFuzzClean(fuzz.t, fuzz.state, fuzz.specs, QUICK_RUN);
  }, 240_000);

  it('regression (found by this fuzzer): a body nested thousands of levels deep is a 400, not a 500', async () => {
    const { t, state } = fuzz;
    /** Arrays nested `levels` deep. */
    const nested = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
    // The body object is level 1: with `data` 63 levels deep the body is 64 levels, the deepest accepted.
    const push = (depth: number) =>
      t.extras('/service/database/merchant/user/feed/merchant-data', `{"userPhoneNumber":"+919000000001","data":${nested(depth - 1)}}`);
    expect((await push(64)).status).toBe(200);
    for (const depth of [65, 5_000, 100_000]) {
      const answer = await push(depth);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ errorCode: 'BAD_REQUEST', message: 'The request body is nested more than 64 levels deep.' });
    }
    // The same in the gateway's open metaData (D17), with the right amount so that it would be stored.
    const id = t.id('fz_deep');
    expect((await t.createTransaction(state.transactional, { id, amount: 20_000, phoneNumber: '+919812345678' })).status).toBe(200);
    const reference = (await t.stage(state.transactional, id)).transactionStage.nextStep.options.userInputOptions[0].referenceId;
    const otp = await t.call('POST', `/api/merchant/transaction/${id}/user-inputs/${reference}`, state.transactional, { value: '123456' });
    const amount = otp.body.transactionStage.nextStep.options.paymentOptions.amount as number;
    const register = (extra: string) =>
      t.call('POST', `/api/merchant/transaction/${id}/payment/register-external`, state.transactional, `{"metaData":{"paymentMode":"UPI","pgPaymentId":"pay_deep","amount":${amount},"extra":${extra}}}`);
    const deep = await register(nested(10_000));
    expect([deep.status, deep.body.errorCode]).toEqual([400, 'BAD_REQUEST']);
    expect((await register(nested(3))).status).toBe(200);
    // And in a signed SDK body.
    const initiated = await t.sdk('/merchant/credit/initiateTransaction', `{"merchantTransactionId":${nested(10_000)}}`);
    expect([initiated.status, initiated.body.message]).toEqual([400, 'BAD_REQUEST']);
    expect(t.loggedErrors).toEqual([]);
  });
});
