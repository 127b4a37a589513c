/**
 * The one Ajv configuration of the contract: JSON Schema 2020-12 (the dialect of OpenAPI 3.1),
 * strict, every error, ajv-formats, OpenAPI's annotation keywords and the contract's vendor
 * extensions known. A bundled document is registered whole so that `#/components/...` references
 * resolve. Only the contract model (./model.ts) makes these; everything else asks the model.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

/** Keywords of an OpenAPI document that carry no validation, and the document parts registered. */
const ANNOTATIONS = ['example', 'discriminator', 'xml', 'externalDocs', 'components', 'paths', 'webhooks'];

/**
 * A strict Ajv for the contract's schemas. `coerce` is the one variation: parameters arrive as
 * strings (path, query, headers) and are coerced to their declared types; bodies never are.
 */
export function createContractAjv(options: { coerce?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    coerceTypes: options.coerce === true ? 'array' : false,
    unicodeRegExp: true,
  });
  addFormats(ajv);
  for (const keyword of ANNOTATIONS) ajv.addKeyword({ keyword });
  return ajv;
}

/**
 * Registers a bundled document under `base`, so that `${base}#/components/...` and
 * `${base}#/webhooks/...` resolve. Only the parts a schema can reference are given, so the root is
 * a valid (empty) schema; every schema compiled from it is still checked in strict mode.
 */
export function registerDocument(ajv: Ajv2020, document: Record<string, unknown>, base: string): void {
  for (const keyword of vendorExtensions(document)) {
    if (ajv.getKeyword(keyword) === false) ajv.addKeyword({ keyword });
  }
  ajv.addSchema(
    { $id: base, components: document.components ?? {}, paths: document.paths ?? {}, webhooks: document.webhooks ?? {} },
    undefined,
    undefined,
    false,
  );
}

/** Every `x-...` key in a document: the contract's annotations (`x-decision`, ...). */
function vendorExtensions(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) vendorExtensions(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key.startsWith('x-')) found.add(key);
      vendorExtensions(child, found);
    }
  }
  return found;
}
