/**
 * The self-check of the sandbox tests: every answer the tests receive from a contract operation is
 * validated against the bundled document (helpers.ts, `checkAgainstContract`). This file checks
 * that the check itself works, that every operation is served, and the validation module.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileContract, loadContract, validateRequest, validateResponse, type OpenApiDocument } from '../../src/sandbox/validation.js';
import { matchOperation } from '../support/contract-paths.js';
import { checkAgainstContract, startSandbox, type TestSandbox } from '../support/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(async () => {
  await t.close();
});

describe('coverage', () => {
  it.each(['gateway', 'sdk', 'web', 'extras'])('serves every operation of the %s document', async (family) => {
    const contract = await loadContract(family);
    const served = new Set(t.sandbox.routes.filter((route) => route.family === family).map((route) => route.operationId));
    const missing = [...contract.operations.values()]
      .filter((operation) => !operation.webhook && !served.has(operation.operationId))
      .map((operation) => operation.operationId);
    expect(missing).toEqual([]);
    expect(served.size).toBeGreaterThan(0);
  });
});

describe('the self-check', () => {
  const headers = new Headers({ 'Content-Type': 'application/json' });

  it('accepts a documented answer', async () => {
    const body = { message: 'TRANSACTION_INITIATED' };
    const id = await checkAgainstContract('POST', '/merchant/credit/initiateTransaction', { status: 201, headers, text: '', body });
    expect(id).toBe('initiateSdkTransaction');
  });

  it('rejects a body that does not match the schema of its status', async () => {
    await expect(
      checkAgainstContract('POST', '/merchant/credit/initiateTransaction', { status: 201, headers, text: '', body: { message: 'OK' } }),
    ).rejects.toThrow(/violates the contract/);
    await expect(
      checkAgainstContract('POST', '/merchant/credit/refundTransaction', { status: 400, headers, text: '', body: { message: 'NOPE' } }),
    ).rejects.toThrow(/violates the contract/);
    await expect(
      checkAgainstContract('POST', '/service/payments/merchant/user/credit/info', {
        status: 401,
        headers,
        text: '',
        body: { message: 'AUTHORIZATION_FAILED' },
      }),
    ).rejects.toThrow(/violates the contract/);
  });

  it('rejects a status the operation does not list', async () => {
    await expect(
      checkAgainstContract('POST', '/merchant/credit/initiateTransaction', { status: 404, headers, text: '', body: { message: 'X' } }),
    ).rejects.toThrow(/does not list/);
  });

  it('rejects a wrong content type', async () => {
    await expect(
      checkAgainstContract('POST', '/merchant/credit/initiateTransaction', {
        status: 201,
        headers: new Headers({ 'Content-Type': 'text/plain' }),
        text: '',
        body: { message: 'TRANSACTION_INITIATED' },
      }),
    ).rejects.toThrow(/violates the contract/);
  });

  it('ignores sandbox-only endpoints', async () => {
    expect(await checkAgainstContract('GET', '/sandbox/clock', { status: 200, headers, text: '', body: {} })).toBeUndefined();
  });
});

describe('documented examples validate against their own schemas', () => {
  it.each(['sdk', 'web', 'extras'])('%s', async (family) => {
    const contract = await loadContract(family);
    const document = contract.document as any;
    let checked = 0;
    for (const [, item] of Object.entries<any>(document.paths)) {
      for (const [, operation] of Object.entries<any>(item)) {
        if (operation.operationId === undefined) continue;
        const compiled = contract.operation(operation.operationId);
        for (const [status, rawResponse] of Object.entries<any>(operation.responses)) {
          const response = rawResponse.$ref ? resolveRef(document, rawResponse.$ref) : rawResponse;
          const media = response.content?.['application/json'];
          for (const example of Object.values<any>(media?.examples ?? {})) {
            if (!/^[0-9]+$/.test(status)) continue;
            const result = validateResponse(compiled, Number(status), example.value);
            expect(result.issues, `${operation.operationId} ${status} ${JSON.stringify(example.value)}`).toEqual([]);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(5);
  });
});

describe('request validation', () => {
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        get: {
          operationId: 'getThing',
          parameters: [
            { $ref: '#/components/parameters/Limit' },
            { name: 'flag', in: 'query', schema: { type: 'boolean' } },
            { name: 'X-Trace', in: 'header', required: true, schema: { type: 'string', pattern: '^t-' } },
          ],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
    components: {
      parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, 'x-decision': 'D19' } } },
    },
  };
  const operation = compileContract('test', document).operation('getThing');

  it('coerces path and query strings to their declared types', () => {
    const result = validateRequest(operation, {
      params: { id: '42' },
      query: { limit: '20', flag: 'true', other: 'ignored' },
      headers: { 'x-trace': 't-1' },
      body: undefined,
    });
    expect(result).toEqual({ ok: true, value: { params: { id: 42 }, query: { limit: 20, flag: true }, headers: { 'X-Trace': 't-1' }, body: undefined } });
  });

  it('names the invalid parameter', () => {
    const badPath = validateRequest(operation, { params: { id: 'abc' }, query: {}, headers: { 'x-trace': 't-1' }, body: undefined });
    expect(badPath).toEqual({ ok: false, location: 'path', issues: [{ field: 'id', issue: 'must be integer' }] });
    const badQuery = validateRequest(operation, { params: { id: '1' }, query: { limit: '500' }, headers: { 'x-trace': 't-1' }, body: undefined });
    expect(badQuery).toEqual({ ok: false, location: 'query', issues: [{ field: 'limit', issue: 'must be <= 100' }] });
    const badHeader = validateRequest(operation, { params: { id: '1' }, query: {}, headers: {}, body: undefined });
    expect(badHeader).toEqual({ ok: false, location: 'header', issues: [{ field: 'X-Trace', issue: 'is required' }] });
  });

  it('matches paths to operations, a literal segment before a template one', () => {
    const contract = compileContract('test', document);
    expect(matchOperation(contract, 'GET', '/things/7')?.params).toEqual({ id: '7' });
    expect(matchOperation(contract, 'POST', '/things/7')).toBeUndefined();
    const ok = { responses: { '200': { description: 'ok' } } };
    const both = compileContract('test', {
      openapi: '3.1.0',
      paths: {
        '/things/{id}': { get: { operationId: 'getThing', ...ok } },
        '/things/special': { get: { operationId: 'getSpecial', ...ok } },
      },
    });
    expect(matchOperation(both, 'GET', '/things/special')?.operation.operationId).toBe('getSpecial');
    expect(matchOperation(both, 'GET', '/things/other')?.operation.operationId).toBe('getThing');
  });
});

function resolveRef(document: any, ref: string): any {
  return ref
    .slice(2)
    .split('/')
    .reduce((node, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}
