/**
 * The fuzzer of fuzz.test.ts (its header says what is mutated and how to reproduce a case) at
 * volume, in the slow group: 10,000 more mutated requests from another seed than `npm test`'s
 * 3,000, against a fresh sandbox of every family.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { closeFuzzAgent, expectFuzzClean, prepareFuzz, VOLUME_RUN, type OperationSpec, type State } from '../support/fuzz.js';
import { startGateway, type GatewayTest } from '../support/gateway.js';

let t: GatewayTest;
let state: State;
let specs: OperationSpec[];

beforeAll(async () => {
  // Webhooks go nowhere: a fake fetch answers every delivery at once.
  t = await startGateway({ fetch: (async () => new Response('ok', { status: 200 })) as typeof fetch });
  ({ state, specs } = await prepareFuzz(t));
}, 120_000);

afterAll(async () => {
  closeFuzzAgent();
  await t?.close();
});

describe('fuzzing every family at volume', () => {
  it(`answers ${VOLUME_RUN.count} mutated requests with documented statuses and bodies, never 5xx (seed ${VOLUME_RUN.seed})`, async () => {
    await expectFuzzClean(t, state, specs, VOLUME_RUN);
  }, 480_000);
});
