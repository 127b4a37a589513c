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
import { derefObject, isObject, operationEntries, type JsonObject, type OpenApiDocument } from '../../src/contract/index.js';

/** Values of the right form for a schema that gives no example, so that a mock accepts them. */
const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  date: '2026-01-01',
  'date-time': '2026-01-01T00:00:00Z',
  email: 'contract-kit@example.in',
  uri: 'https://contract-kit.example.in/',
};

function exampleOfSchema(document: JsonObject, schemaNode: unknown, depth = 0): unknown {
  const schema = derefObject(document, schemaNode);
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
  const parameter = derefObject(document, parameterNode);
  if (parameter === undefined || parameter.example !== undefined) return;
  // An optional query or cookie parameter without an example is left out of the request.
  if (parameter.in !== 'header' && parameter.in !== 'path' && parameter.required !== true) return;
  const first = isObject(parameter.examples) ? Object.values(parameter.examples)[0] : undefined;
  const named = first === undefined ? undefined : derefObject(document, first)?.value;
  const value = named !== undefined ? named : exampleOfSchema(document, parameter.schema);
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
  // A path item's parameters are met again with each of its operations; a filled one is left as it is.
  for (const { pathItem, operation } of operationEntries(document)) {
    for (const parameter of [pathItem.parameters, operation.parameters].flatMap((list) => (Array.isArray(list) ? list : []))) {
      fillParameter(document, parameter);
    }
  }
  return document;
}
