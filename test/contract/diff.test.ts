/**
 * The contract differ (src/contract/diff.ts) behind the site's "Contract changes" page: operations,
 * parameters, request and response fields (through `$ref` and `allOf`), enums and status codes
 * added, removed or changed; descriptions and examples ignored; and the committed 2.0.0 release
 * against the current documents.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffDocuments } from '../../src/contract/diff.js';
import { FAMILIES } from '../../src/contract/index.js';
import { groupChanges, releasedVersions } from '../../scripts/docs-pages/contract-changes.js';

const root = resolve(import.meta.dirname, '..', '..');

function document(overrides: { status?: Record<string, unknown>; amountType?: string; required?: string[]; extraPath?: boolean; description?: string } = {}) {
  return {
    openapi: '3.1.1',
    info: { title: 't', version: '1', description: overrides.description ?? 'one' },
    paths: {
      '/api/transaction': {
        post: {
          operationId: 'create',
          parameters: [{ name: 'X-Partner-Id', in: 'header', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Request' } } } },
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Answer' }] } } } },
            ...(overrides.status ?? {}),
          },
        },
      },
      ...(overrides.extraPath ? { '/api/refund': { post: { operationId: 'refund', responses: { '200': { description: 'ok' } } } } } : {}),
    },
    components: {
      schemas: {
        Request: {
          type: 'object',
          required: overrides.required ?? ['amount'],
          properties: { amount: { type: overrides.amountType ?? 'integer' }, user: { type: 'object', properties: { name: { type: 'string' } } } },
        },
        Answer: { type: 'object', properties: { status: { type: 'string', enum: overrides.status ? ['PENDING', 'SUCCESS', 'REFUNDED'] : ['PENDING', 'SUCCESS', 'FAILURE'] } } },
      },
    },
  };
}

describe('diffDocuments', () => {
  it('finds nothing between a document and itself, nor in descriptions', () => {
    expect(diffDocuments(document(), document({ description: 'two' }))).toEqual([]);
  });

  it('names an operation added or removed once, without listing its parts', () => {
    expect(diffDocuments(document(), document({ extraPath: true }))).toEqual([
      { kind: 'added', operation: 'POST /api/refund', subject: 'operation', detail: 'operationId refund' },
    ]);
    expect(diffDocuments(document({ extraPath: true }), document())).toEqual([{ kind: 'removed', operation: 'POST /api/refund', subject: 'operation' }]);
  });

  it('follows $ref and allOf into fields: a type, a required flag and enum values changed', () => {
    const changes = diffDocuments(document(), document({ amountType: 'string', required: [], status: { '404': { description: 'missing' } } }));
    expect(changes).toEqual([
      { kind: 'changed', operation: 'POST /api/transaction', subject: 'request field amount', detail: 'type integer → string; no longer required' },
      { kind: 'changed', operation: 'POST /api/transaction', subject: 'response 200 field status', detail: 'enum + "REFUNDED"; enum − "FAILURE"' },
      { kind: 'added', operation: 'POST /api/transaction', subject: 'response 404' },
    ]);
  });

  it('groups a change repeated across operations into one row', () => {
    const rows = groupChanges([
      { kind: 'added', operation: 'POST /a', subject: 'response 429' },
      { kind: 'added', operation: 'POST /b', subject: 'response 429' },
      { kind: 'removed', operation: 'GET /c', subject: 'operation' },
    ]);
    expect(rows.map((row) => row.operations)).toEqual([['POST /a', 'POST /b'], ['GET /c']]);
  });
});

describe('the released documents', () => {
  it('2.0.0 is committed for every family, and is version 2.0.0', () => {
    expect(releasedVersions(root)).toContain('2.0.0');
    for (const family of FAMILIES) {
      const released = JSON.parse(readFileSync(join(root, 'openapi', 'releases', '2.0.0', `${family}.json`), 'utf8'));
      expect(released.info.version).toBe('2.0.0');
    }
  });

  it('from 2.0.0 to the current web document: the notes webhook callback (D73) is added', () => {
    const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'));
    const changes = diffDocuments(read('openapi/releases/2.0.0/web.json'), read('generated/openapi/web.json'));
    expect(changes).toContainEqual(
      {
        kind: 'added',
        operation: 'callback notesWebhookUrl POST {$request.body#/notes/webhook_url}',
        subject: 'operation',
        detail: 'operationId notifyWebNotesWebhookUrl',
      },
    );
  });
});
