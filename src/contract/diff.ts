/**
 * The differences between two versions of a bundled document, as a reader of a changelog wants
 * them: operations and webhooks added or removed, and in each operation its parameters, request
 * and response fields (with their types, whether they are required, their enum values) and status
 * codes added, removed or changed. Descriptions, examples and `x-` extensions are not compared.
 *
 * Hand-written over the contract model (./document.ts) because the npm differs do not fit: Atlassian's
 * `openapi-diff` 0.24.1 refuses OpenAPI 3.1 ("Swagger Parser only supports versions 3.0.0 ... 3.0.3"),
 * and `@useoptic/openapi-utilities` 1.0.9 compares the raw JSON trees, so a change inside a
 * referenced schema is reported at `#/components/...` and not in the operations that use it, which
 * is what a reader looks for; oasdiff is a Go program. Each document is flattened once into facts
 * (one per operation, parameter, field and status code, with `$ref`s followed, `allOf` merged and
 * `oneOf`/`anyOf` branches walked under the same field path), and the two sets of facts are
 * compared by key: linear in the size of the documents. Schemas are walked to a bounded depth, and a
 * schema already on the path is not entered again (recursive schemas end).
 */
import { HTTP_METHODS, isObject, operationEntries, resolveRef, type JsonObject } from './document.js';

type ChangeKind = 'added' | 'removed' | 'changed';

export interface ContractChange {
  kind: ChangeKind;
  /** The operation: `POST /api/transaction` or `webhook transactionStatus`; `document` for the whole. */
  operation: string;
  /** What changed in it: `operation`, `query parameter id`, `request field transaction.amount`, `response 404`, ... */
  subject: string;
  /** For a change: what it was and what it is, e.g. `type string → integer; enum + REFUNDED`. */
  detail?: string;
}

/** One thing the document promises, with the attributes compared between versions. */
interface Fact {
  operation: string;
  subject: string;
  attributes: Record<string, string>;
  enum?: string[];
}

/** Fields deeper than this are not listed (the documents nest four or five levels). */
const MAX_DEPTH = 12;

/** Every difference from `before` to `after`, operations in the order of `after`, then removed ones. */
export function diffDocuments(before: JsonObject, after: JsonObject): ContractChange[] {
  const old = facts(before);
  const now = facts(after);
  const changes: ContractChange[] = [];
  for (const [key, fact] of now) {
    const was = old.get(key);
    if (was === undefined) {
      changes.push({ kind: 'added', operation: fact.operation, subject: fact.subject, ...describe(fact) });
      continue;
    }
    const detail = compare(was, fact);
    if (detail) changes.push({ kind: 'changed', operation: fact.operation, subject: fact.subject, detail });
  }
  for (const [key, fact] of old) {
    if (!now.has(key)) changes.push({ kind: 'removed', operation: fact.operation, subject: fact.subject });
  }
  // A removed or added operation stands for its parameters, fields and status codes.
  const whole = new Set(changes.filter((c) => c.subject === 'operation' && c.kind !== 'changed').map((c) => `${c.kind} ${c.operation}`));
  return changes.filter((c) => c.subject === 'operation' || !whole.has(`${c.kind} ${c.operation}`));
}

function describe(fact: Fact): { detail?: string } {
  const parts = Object.entries(fact.attributes).map(([name, value]) => (value === 'yes' ? name : `${name} ${value}`));
  if (fact.enum) parts.push(`enum ${fact.enum.join(', ')}`);
  return parts.length > 0 ? { detail: parts.join('; ') } : {};
}

function compare(was: Fact, now: Fact): string | undefined {
  const parts: string[] = [];
  for (const name of new Set([...Object.keys(was.attributes), ...Object.keys(now.attributes)])) {
    const a = was.attributes[name];
    const b = now.attributes[name];
    if (a === b) continue;
    if (a === 'yes' && b === undefined) parts.push(`no longer ${name}`);
    else if (a === undefined && b === 'yes') parts.push(`now ${name}`);
    else parts.push(`${name} ${a ?? '(none)'} → ${b ?? '(none)'}`);
  }
  const before = new Set(was.enum ?? []);
  const after = new Set(now.enum ?? []);
  if (was.enum && !now.enum) parts.push('no longer an enum');
  else if (!was.enum && now.enum) parts.push(`now an enum: ${now.enum.join(', ')}`);
  else {
    const added = [...after].filter((v) => !before.has(v));
    const removed = [...before].filter((v) => !after.has(v));
    if (added.length > 0) parts.push(`enum + ${added.join(', ')}`);
    if (removed.length > 0) parts.push(`enum − ${removed.join(', ')}`);
  }
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The facts of a document by key (`operation | subject`). */
function facts(document: JsonObject): Map<string, Fact> {
  const found = new Map<string, Fact>();
  const add = (fact: Fact) => {
    const key = `${fact.operation} | ${fact.subject}`;
    const earlier = found.get(key);
    // A field seen in several oneOf branches: one fact, its enum values together.
    if (earlier) {
      if (fact.enum) earlier.enum = [...new Set([...(earlier.enum ?? []), ...fact.enum])];
      for (const [name, value] of Object.entries(fact.attributes)) {
        if (earlier.attributes[name] !== undefined && earlier.attributes[name] !== value) earlier.attributes[name] = `${earlier.attributes[name]} | ${value}`;
        else earlier.attributes[name] ??= value;
      }
      return;
    }
    found.set(key, fact);
  };
  for (const entry of operationEntries(document)) {
    const operation = entry.kind === 'webhook' ? `webhook ${entry.key}` : `${entry.method.toUpperCase()} ${entry.key}`;
    operationFacts(document, operation, entry.operation, asArray(entry.pathItem.parameters), add);
  }
  return found;
}

/** The facts of one operation, then of its callbacks (`callback <name> POST <expression>`). */
function operationFacts(document: JsonObject, operation: string, op: JsonObject, pathParameters: unknown[], add: (fact: Fact) => void, depth = 0): void {
  add({ operation, subject: 'operation', attributes: { ...(typeof op.operationId === 'string' ? { operationId: op.operationId } : {}), ...(op.deprecated === true ? { deprecated: 'yes' } : {}) } });
  for (const raw of [...pathParameters, ...asArray(op.parameters)]) {
    const parameter = deref(document, raw);
    if (!parameter || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') continue;
    const subject = `${parameter.in} parameter ${parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name}`;
    const fact = schemaFact(document, parameter.schema);
    add({ operation, subject, attributes: { ...fact.attributes, ...(parameter.required === true ? { required: 'yes' } : {}) }, ...(fact.enum ? { enum: fact.enum } : {}) });
  }
  const body = deref(document, op.requestBody);
  if (body) {
    for (const [mediaType, content] of Object.entries(isObject(body.content) ? body.content : {})) {
      add({ operation, subject: `request body ${mediaType}`, attributes: body.required === true ? { required: 'yes' } : {} });
      if (isObject(content)) walkSchema(document, content.schema, 'request field', '', add, operation, new Set(), 0);
    }
  }
  for (const [status, rawResponse] of Object.entries(isObject(op.responses) ? op.responses : {})) {
    add({ operation, subject: `response ${status}`, attributes: {} });
    const response = deref(document, rawResponse);
    if (!response) continue;
    for (const header of Object.keys(isObject(response.headers) ? response.headers : {})) {
      add({ operation, subject: `response ${status} header ${header.toLowerCase()}`, attributes: {} });
    }
    for (const [mediaType, content] of Object.entries(isObject(response.content) ? response.content : {})) {
      add({ operation, subject: `response ${status} ${mediaType}`, attributes: {} });
      if (isObject(content)) walkSchema(document, content.schema, `response ${status} field`, '', add, operation, new Set(), 0);
    }
  }
  if (depth > 0) return; // callbacks of callbacks are not described
  for (const [name, rawCallback] of Object.entries(isObject(op.callbacks) ? op.callbacks : {})) {
    const callback = deref(document, rawCallback);
    for (const [expression, rawItem] of Object.entries(callback ?? {})) {
      const item = deref(document, rawItem);
      for (const method of HTTP_METHODS) {
        const inner = item?.[method];
        if (isObject(inner)) operationFacts(document, `callback ${name} ${method.toUpperCase()} ${expression}`, inner, asArray(item?.parameters), add, depth + 1);
      }
    }
  }
}

function walkSchema(
  document: JsonObject,
  raw: unknown,
  prefix: string,
  path: string,
  add: (fact: Fact) => void,
  operation: string,
  onPath: Set<unknown>,
  depth: number,
): void {
  if (depth > MAX_DEPTH || !isObject(raw)) return;
  const schema = resolveRef(document, raw, '#').node;
  if (!isObject(schema) || onPath.has(schema)) return;
  onPath.add(schema);
  try {
    for (const part of asArray(schema.allOf)) walkSchema(document, part, prefix, path, add, operation, onPath, depth + 1);
    for (const branch of [...asArray(schema.oneOf), ...asArray(schema.anyOf)]) walkSchema(document, branch, prefix, path, add, operation, onPath, depth + 1);
    const required = new Set(asArray(schema.required).filter((name): name is string => typeof name === 'string'));
    for (const [name, child] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
      const field = path === '' ? name : `${path}.${name}`;
      const fact = schemaFact(document, child);
      add({ operation, subject: `${prefix} ${field}`, attributes: { ...fact.attributes, ...(required.has(name) ? { required: 'yes' } : {}) }, ...(fact.enum ? { enum: fact.enum } : {}) });
      walkSchema(document, child, prefix, field, add, operation, onPath, depth + 1);
    }
    if (schema.items !== undefined) {
      const field = `${path}[]`;
      const fact = schemaFact(document, schema.items);
      if (fact.enum) add({ operation, subject: `${prefix} ${field}`, attributes: fact.attributes, enum: fact.enum });
      walkSchema(document, schema.items, prefix, field, add, operation, onPath, depth + 1);
    }
  } finally {
    onPath.delete(schema);
  }
}

/** The type and enum values of a schema, its references followed and its allOf parts merged. */
function schemaFact(document: JsonObject, raw: unknown): { attributes: Record<string, string>; enum?: string[] } {
  const schema = isObject(raw) ? resolveRef(document, raw, '#').node : undefined;
  if (!isObject(schema)) return { attributes: {} };
  const attributes: Record<string, string> = {};
  const type = typeOf(document, schema);
  if (type) attributes.type = type;
  if (schema.deprecated === true) attributes.deprecated = 'yes';
  const values = Array.isArray(schema.enum) ? schema.enum : schema.const !== undefined ? [schema.const] : undefined;
  return values ? { attributes, enum: values.map((v) => JSON.stringify(v)) } : { attributes };
}

function typeOf(document: JsonObject, schema: JsonObject): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const types = asArray(schema[key])
      .map((part) => resolveRef(document, part, '#').node)
      .map((part) => (isObject(part) ? typeOf(document, part) : undefined))
      .filter((t): t is string => t !== undefined);
    if (types.length > 0) return [...new Set(types)].join(key === 'allOf' ? ' & ' : ' | ');
  }
  if (isObject(schema.properties)) return 'object';
  return undefined;
}

function deref(document: JsonObject, node: unknown): JsonObject | undefined {
  if (!isObject(node)) return undefined;
  const value = resolveRef(document, node, '#').node;
  return isObject(value) ? value : undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
