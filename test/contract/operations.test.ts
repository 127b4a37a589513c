/**
 * Every operation of the interface description exists in the document of its family. The list is
 * the project's record of the description's facts (test/data/interface-description.json): each
 * `METHOD {base_url|web_url|sdk_url}/path[?query]` it writes, the URL it names without a method
 * (loaded with GET), and each operation it names only in words.
 */
import { describe, expect, it } from 'vitest';
import { contractOf } from '../../src/contract/index.js';
import {
  bundleOf,
  derefObject,
  FAMILIES,
  isObject,
  operationName,
  operationsOf,
  pathShape,
  requireDocument,
  topLevelProperties,
  type Family,
  type JsonObject,
  type OperationEntry,
} from '../support/documents.js';
import { DESCRIPTION, DESCRIPTION_DATA_FILE, written } from '../support/description.js';

/**
 * The operationIds this contract gives to the operations the description names only in words
 * (D10, D11, D19). The phrases are checked against the description below.
 */
const OPERATIONS_NAMED_IN_WORDS: Record<string, string> = {
  'Disable a merchant': 'disableMerchant',
  'create dashboard access for a merchant': 'createDashboardAccess',
  'List transactions': 'listTransactions',
  'get settlement information': 'getSettlement',
};

/** How many webhooks each family's document declares (the gateway: transaction and refund events). */
const WEBHOOK_COUNT: Record<Family, number> = { gateway: 2, extras: 0, web: 1, sdk: 1 };

interface ExpectedOperation {
  family: Family;
  method: string;
  path: string;
  query: string | undefined;
  /** How the description writes it: for the test's name. */
  written: string;
}

/** Every operation of the description; a URL named without a method is fetched with GET. */
const EXPECTED: ExpectedOperation[] = DESCRIPTION.operations.map((operation) => ({
  family: operation.family,
  method: operation.method ?? 'GET',
  path: operation.path,
  query: operation.query,
  written: written(operation),
}));

function findOperation(document: JsonObject, method: string, path: string): OperationEntry | undefined {
  return operationsOf(document).find(
    (entry) => entry.kind === 'path' && entry.method === method.toLowerCase() && pathShape(entry.key) === pathShape(path),
  );
}

/** The problems with the query `name=value&...` on an operation: each must be a query parameter allowing that value. */
function queryProblems(family: Family, entry: OperationEntry, query: string): string[] {
  const problems: string[] = [];
  // The parameters that apply, as the contract model declares them: the path item's, overridden by the operation's.
  const parameters = contractOf(family).at(entry.key, entry.method)?.parameters ?? [];
  for (const pair of query.split('&')) {
    const [name = '', value = ''] = pair.split('=');
    const parameter = parameters.find((candidate) => candidate.in === 'query' && candidate.name === name);
    if (parameter === undefined) {
      problems.push(`declares no query parameter '${name}'`);
      continue;
    }
    const allowed = isObject(parameter.schema) ? parameter.schema.enum : undefined;
    if (!Array.isArray(allowed) || !allowed.includes(value)) {
      problems.push(`query parameter '${name}' does not allow '${value}' in its schema's enum (${JSON.stringify(allowed)})`);
    }
  }
  return problems;
}

/** Which family serves an address (and, under {sdk_url}, a path prefix): the description's own split. */
function familyOfAddress(operation: { address: string; path: string }): Family | undefined {
  if (operation.address === '{base_url}') return 'gateway';
  if (operation.address === '{web_url}') return 'web';
  if (operation.address !== '{sdk_url}') return undefined;
  if (operation.path.startsWith('/merchant/credit/')) return 'sdk';
  if (operation.path.startsWith('/service/')) return 'extras';
  return undefined;
}

describe(`the interface description's operations (${DESCRIPTION_DATA_FILE})`, () => {
  it('lists the 17 operations written as METHOD {address}/path and the browser script named by its URL', () => {
    expect(DESCRIPTION.operations.filter((operation) => operation.method !== null)).toHaveLength(17);
    expect(DESCRIPTION.operations.filter((operation) => operation.method === null).map((operation) => operation.path)).toEqual([
      '/sdk.js',
    ]);
  });

  it('gives each operation the family its address serves, once', () => {
    const wrong = DESCRIPTION.operations
      .filter((operation) => familyOfAddress(operation) !== operation.family)
      .map((operation) => `${written(operation)}: family ${operation.family}, its address says ${String(familyOfAddress(operation))}`);
    expect(wrong).toEqual([]);
    const keys = DESCRIPTION.operations.map((operation) => written(operation));
    expect(new Set(keys).size, 'an operation is listed twice').toBe(keys.length);
  });
});

describe('every operation of the description exists in its family document', () => {
  it.each(EXPECTED.map((operation) => [`${operation.written} -> ${operation.family}`, operation] as const))(
    '%s',
    (_name, operation) => {
      const bundle = bundleOf(operation.family);
      const document = requireDocument(bundle);
      const entry = findOperation(document, operation.method, operation.path);
      expect(
        entry,
        `${bundle.file} has no operation ${operation.method} ${operation.path} (description: ${operation.written})`,
      ).toBeDefined();
      if (entry !== undefined && operation.query !== undefined) {
        const problems = queryProblems(bundle.family, entry, operation.query);
        expect(
          problems,
          `${operationName(bundle.family, entry)} (${String(entry.operation.operationId)}) should serve ?${operation.query}: ${problems.join('; ')}`,
        ).toEqual([]);
      }
    },
  );
});

describe('operations the description names only in words', () => {
  it('are exactly the ones this suite gives an operationId', () => {
    const phrases = DESCRIPTION.operationsNamedInWords.map((named) => named.phrase);
    expect(
      [...phrases].sort(),
      'the description\'s rows "Method, path and payloads: not shown" changed: map each phrase to an operationId',
    ).toEqual(Object.keys(OPERATIONS_NAMED_IN_WORDS).sort());
  });

  it.each(Object.entries(OPERATIONS_NAMED_IN_WORDS))('"%s" is gateway operation %s, marked x-decision', (phrase, operationId) => {
    const bundle = bundleOf('gateway');
    const entry = operationsOf(requireDocument(bundle)).find((candidate) => candidate.operation.operationId === operationId);
    expect(entry, `${bundle.file} has no operation with operationId ${operationId} ("${phrase}")`).toBeDefined();
    expect(entry?.kind, `${operationId} must be an operation of paths, not a webhook`).toBe('path');
    expect(entry?.operation['x-decision'], `${operationId} decides its method and path: it needs x-decision: Dnn`).toMatch(
      /^D[0-9]{2,3}$/,
    );
  });
});

describe.each(FAMILIES)('%s: operations beyond the description', (family) => {
  it('are each marked with x-decision', () => {
    const bundle = bundleOf(family);
    const document = requireDocument(bundle);
    const described = EXPECTED.filter((operation) => operation.family === family);
    const undecided = operationsOf(document)
      .filter((entry) => entry.kind === 'path')
      .filter(
        (entry) =>
          !described.some(
            (operation) => operation.method.toLowerCase() === entry.method && pathShape(operation.path) === pathShape(entry.key),
          ),
      )
      .filter((entry) => typeof entry.operation['x-decision'] !== 'string')
      .map((entry) => `${operationName(family, entry)} (${String(entry.operation.operationId)})`);
    expect(undecided, `not in the description and not marked x-decision: ${undecided.join('; ')}`).toEqual([]);
  });
});

describe.each(FAMILIES)('%s: webhooks', (family) => {
  it(`declares ${WEBHOOK_COUNT[family]} webhook(s)`, () => {
    const bundle = bundleOf(family);
    const webhooks = operationsOf(requireDocument(bundle)).filter((entry) => entry.kind === 'webhook');
    expect(
      webhooks.map((entry) => entry.key),
      `${bundle.file} should declare ${WEBHOOK_COUNT[family]} webhook(s)`,
    ).toHaveLength(WEBHOOK_COUNT[family]);
  });
});

describe('gateway webhooks', () => {
  it.each(['transaction', 'refund'])('one webhook carries the %s event (payload property of that name)', (event) => {
    const bundle = bundleOf('gateway');
    const document = requireDocument(bundle);
    const carrying = operationsOf(document)
      .filter((entry) => entry.kind === 'webhook')
      .filter((entry) => {
        const body = derefObject(document, entry.operation.requestBody);
        const content = body?.content;
        if (!isObject(content)) return false;
        return Object.values(content).some((mediaType) => {
          const properties = topLevelProperties(document, isObject(mediaType) ? mediaType.schema : undefined);
          // The refund event may mention its transaction; the transaction event carries no refund key.
          return properties.has(event) && (event === 'refund' || !properties.has('refund'));
        });
      })
      .map((entry) => entry.key);
    expect(carrying, `${bundle.file}: webhooks whose payload has a top-level '${event}' property`).toHaveLength(1);
  });
});
