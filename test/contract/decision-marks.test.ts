/**
 * Every decided name carries its mark. The README says that what the references mark "Decided by
 * this contract" (`x-decision` in the documents) is the contract's choice and that anything
 * without the mark is what the service documents; decisions.test.ts checks that every mark names a
 * decision of docs/decisions.md and that a marked element says so, and this file checks the other
 * direction: a name the description does not write is marked.
 *
 * For each family's bundled document, every property of every request body, response body and
 * webhook body (following `$ref`, `allOf`, `oneOf`, `anyOf`, `items` and `additionalProperties`), and
 * every parameter and response header of its operations and webhooks, whose name is not among the
 * names the description writes for that family (test/data/interface-description.json `names`),
 * must carry `x-decision` itself (beside its `$ref` or on the schema it refers to) or sit in a
 * marked schema (a record the contract decided as a whole) or `allOf` branch; a header may be
 * covered by its marked response. An operation the description does not write is decided as a
 * whole (operations.test.ts requires its mark), and so is every name in it. A mark on a request
 * body, a media type, a response, or an operation the description writes does not count for the
 * fields of its body: it decides something of that element (the exact bytes signed, a timeout),
 * not every name in it.
 */
import { describe, expect, it } from 'vitest';
import { bundleOf, derefObject, FAMILIES, isObject, operationsOf, pathShape, requireDocument, type Family, type JsonObject, type OperationEntry } from '../support/documents.js';
import { DESCRIPTION, DESCRIPTION_DATA_FILE } from '../support/description.js';

/** Schemas are nested far less deeply than this; recursion (a schema that contains itself) stops here. */
const MAX_DEPTH = 24;

const marked = (node: unknown): boolean => isObject(node) && typeof node['x-decision'] === 'string';

/** The element itself or what its `$ref` names carries a mark. */
function carriesMark(document: JsonObject, node: unknown): boolean {
  return marked(node) || marked(derefObject(document, node));
}

/**
 * Whether the description writes the operation (`METHOD {address}/path`): an operation it does not
 * write is decided as a whole, and marked so (operations.test.ts), with every name in it.
 */
function described(family: Family, entry: OperationEntry): boolean {
  if (entry.kind !== 'path') return true;
  return DESCRIPTION.operations.some(
    (operation) => operation.family === family && (operation.method ?? 'GET').toLowerCase() === entry.method && pathShape(operation.path) === pathShape(entry.key),
  );
}

/** The names of `family`'s document the description does not write and no mark covers: `where: name`. */
function unmarkedNames(family: Family): string[] {
  const document = requireDocument(bundleOf(family));
  const written = new Set(DESCRIPTION.names[family]);
  const found = new Set<string>();
  const check = (where: string, name: string, covered: boolean) => {
    if (!covered && !written.has(name)) found.add(`${where}: ${name}`);
  };

  const schema = (node: unknown, where: string, covered: boolean, depth: number): void => {
    const target = derefObject(document, node);
    if (target === undefined || depth > MAX_DEPTH) return;
    const inside = covered || carriesMark(document, node);
    // Properties declared in several branches of an allOf count as marked when one marks them.
    const properties = new Map<string, { nodes: unknown[]; covered: boolean }>();
    const collect = (holder: JsonObject, holderCovered: boolean) => {
      if (!isObject(holder.properties)) return;
      for (const [name, property] of Object.entries(holder.properties)) {
        const entry = properties.get(name) ?? { nodes: [], covered: false };
        entry.nodes.push(property);
        entry.covered ||= holderCovered || carriesMark(document, property);
        properties.set(name, entry);
      }
    };
    collect(target, inside);
    for (const branch of Array.isArray(target.allOf) ? target.allOf : []) {
      const branchTarget = derefObject(document, branch);
      if (branchTarget !== undefined) collect(branchTarget, inside || carriesMark(document, branch));
    }
    for (const [name, entry] of properties) {
      check(where, name, entry.covered);
      for (const property of entry.nodes) schema(property, `${where}.${name}`, entry.covered, depth + 1);
    }
    for (const branch of Array.isArray(target.allOf) ? target.allOf : []) {
      const branchTarget = derefObject(document, branch);
      // The branch's properties were checked above; its nested schemas are walked here.
      for (const keyword of ['oneOf', 'anyOf'] as const) {
        for (const option of Array.isArray(branchTarget?.[keyword]) ? (branchTarget[keyword] as unknown[]) : []) schema(option, where, inside, depth + 1);
      }
    }
    for (const keyword of ['oneOf', 'anyOf'] as const) {
      for (const option of Array.isArray(target[keyword]) ? target[keyword] : []) schema(option, where, inside, depth + 1);
    }
    if (target.items !== undefined) schema(target.items, `${where}[]`, inside, depth + 1);
    if (isObject(target.additionalProperties)) schema(target.additionalProperties, `${where}{}`, inside, depth + 1);
  };

  const content = (node: unknown, where: string, covered: boolean): void => {
    const target = derefObject(document, node);
    if (target === undefined || !isObject(target.content)) return;
    for (const [type, media] of Object.entries(target.content)) {
      if (isObject(media)) schema(media.schema, `${where} ${type}`, covered, 0);
    }
  };

  for (const entry of operationsOf(document)) {
    const name = `${entry.kind === 'webhook' ? 'webhook ' : ''}${entry.method.toUpperCase()} ${entry.key}`;
    const decided = !described(family, entry) && marked(entry.operation);
    const parameters = [
      ...(Array.isArray(entry.pathItem.parameters) ? entry.pathItem.parameters : []),
      ...(Array.isArray(entry.operation.parameters) ? entry.operation.parameters : []),
    ];
    for (const parameter of parameters) {
      const target = derefObject(document, parameter);
      if (target === undefined || typeof target.name !== 'string') continue;
      check(`${name} ${String(target.in)} parameter`, target.name, decided || carriesMark(document, parameter) || carriesMark(document, target.schema));
    }
    const body = entry.operation.requestBody;
    if (body !== undefined) content(body, `${name} request`, decided);
    const responses = isObject(entry.operation.responses) ? entry.operation.responses : {};
    for (const [status, response] of Object.entries(responses)) {
      content(response, `${name} ${status}`, decided);
      const covered = decided || carriesMark(document, response);
      const headers = derefObject(document, response)?.headers;
      for (const [header, value] of Object.entries(isObject(headers) ? headers : {})) {
        check(`${name} ${status} header`, header, covered || carriesMark(document, value) || carriesMark(document, derefObject(document, value)?.schema));
      }
    }
  }
  return [...found].sort();
}

describe(`names the description does not write carry x-decision (${DESCRIPTION_DATA_FILE} names)`, () => {
  it('the description names fields in every family', () => {
    for (const family of FAMILIES) expect(DESCRIPTION.names[family].length, family).toBeGreaterThan(3);
  });

  it.each(FAMILIES)('%s: every other field, parameter and header is marked where it is or where it sits', (family) => {
    const unmarked = unmarkedNames(family);
    expect(
      unmarked,
      `names the description does not write, without x-decision (mark the property, its schema, or the element that decides it, and say "Decided by this contract (Dnn)"):\n  ${unmarked.join('\n  ')}`,
    ).toEqual([]);
  });
});
