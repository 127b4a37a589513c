/**
 * JSON Schema validation against a bundled document: the whole document is registered with Ajv
 * (draft 2020-12, the dialect of OpenAPI 3.1) so that its internal `#/components/...` references
 * resolve, and any schema inside it is compiled by its JSON pointer.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { uriPointer, type Family, type JsonObject } from './documents.js';

const addFormats = formatsPlugin.default;

/**
 * Keywords OpenAPI 3.1 allows in a Schema Object beyond JSON Schema, plus this contract's
 * vendor extension. Ajv stays strict about every other unknown keyword and format.
 */
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs', 'x-decision'];

/**
 * The fields of the OpenAPI Object: Ajv compiles the registered document's root as a schema
 * before it resolves a pointer into it, so they must be known (they validate nothing).
 */
const OPENAPI_OBJECT_FIELDS = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags'];

export class DocumentSchemas {
  private readonly ajv: Ajv2020;
  private readonly base: string;

  constructor(family: Family, document: JsonObject) {
    this.base = `https://contract.paylater.invalid/${family}.json`;
    // strictTypes/strictTuples only comment on the style of a schema (they would log); unknown
    // keywords and formats still throw.
    this.ajv = new Ajv2020({ allErrors: true, strictTypes: false, strictTuples: false });
    addFormats(this.ajv);
    this.ajv.addVocabulary([...OPENAPI_KEYWORDS, ...OPENAPI_OBJECT_FIELDS]);
    this.ajv.addSchema(document, this.base);
  }

  /** The validator of the schema at `segments` (compiled once; throws when it cannot compile). */
  validator(segments: readonly string[]): ValidateFunction {
    const ref = `${this.base}${uriPointer(segments)}`;
    const validate = this.ajv.getSchema(ref);
    if (validate === undefined) throw new Error(`no schema at ${ref}`);
    return validate;
  }

  /** The problems of `value` against the schema at `segments`, one line each; empty when valid. */
  problems(segments: readonly string[], value: unknown): string[] {
    const validate = this.validator(segments);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (error) => `${error.instancePath || '(root)'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    );
  }
}
