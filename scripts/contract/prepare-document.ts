/**
 * Makes a copy of a bundled document that Dredd 14 can compile. The contract itself is not
 * changed; only the copy handed to Dredd is:
 *
 * - a header, path or required parameter without `example` gets one taken from its schema
 *   (`examples[0]`, `example`, `default`, `const`, `enum[0]`, a value of its `format`), or a
 *   placeholder: Dredd's OpenAPI 3 compiler crashes on a header parameter without a value
 *   ("Cannot read properties of undefined (reading 'toValue')") and cannot expand a path without
 *   one. The hooks set the real values anyway (signatures, ids). Optional query parameters
 *   without an example stay out of the request.
 * - `webhooks` is removed (Dredd ignores it; it describes requests the service sends).
 */
import { deref, isObject, type JsonObject, type OpenApiDocument } from '../../src/contract/index.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Values of the right form for a schema that gives no example, so that a mock accepts them. */
const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  date: '2026-01-01',
  'date-time': '2026-01-01T00:00:00Z',
  email: 'contract-kit@example.in',
  uri: 'https://contract-kit.example.in/',
};

function objectAt(document: JsonObject, node: unknown): JsonObject | undefined {
  const value = deref(document, node);
  return isObject(value) ? value : undefined;
}

function exampleOfSchema(document: JsonObject, schemaNode: unknown, depth = 0): unknown {
  const schema = objectAt(document, schemaNode);
  if (schema === undefined || depth > 10) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
    const members = schema[keyword];
    for (const member of Array.isArray(members) ? members : []) {
      const value = exampleOfSchema(document, member, depth + 1);
      if (value !== undefined) return value;
    }
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'integer' || type === 'number') return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (type === 'boolean') return true;
  if (typeof schema.format === 'string' && FORMAT_EXAMPLES[schema.format] !== undefined) return FORMAT_EXAMPLES[schema.format];
  return undefined;
}

function fillParameter(document: JsonObject, parameterNode: unknown): void {
  const parameter = objectAt(document, parameterNode);
  if (parameter === undefined || parameter.example !== undefined) return;
  // An optional query or cookie parameter without an example is left out of the request.
  if (parameter.in !== 'header' && parameter.in !== 'path' && parameter.required !== true) return;
  if (isObject(parameter.examples)) {
    const first = Object.values(parameter.examples)[0];
    const value = first === undefined ? undefined : objectAt(document, first);
    if (value !== undefined && value.value !== undefined) {
      parameter.example = value.value;
      return;
    }
  }
  const value = exampleOfSchema(document, parameter.schema);
  parameter.example = value === undefined ? `example-${String(parameter.name)}` : value;
}

/** The Dredd-ready copy of a bundled OpenAPI document (the input is not changed). */
export function prepareForDredd(original: OpenApiDocument): JsonObject {
  const document = JSON.parse(JSON.stringify(original)) as JsonObject;
  delete document.webhooks;
  const components = isObject(document.components) ? document.components : {};
  for (const parameter of Object.values(isObject(components.parameters) ? components.parameters : {})) {
    fillParameter(document, parameter);
  }
  for (const item of Object.values(isObject(document.paths) ? document.paths : {})) {
    const pathItem = objectAt(document, item) ?? {};
    for (const parameter of Array.isArray(pathItem.parameters) ? pathItem.parameters : []) fillParameter(document, parameter);
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) fillParameter(document, parameter);
    }
  }
  return document;
}
