/**
 * JSON Schema validation against a bundled document, by the contract model (src/contract/): any
 * schema inside the document is compiled by its JSON pointer, with the model's one Ajv
 * configuration, and its problems worded one line each for a test's message.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileContract, type Contract } from '../../src/contract/index.js';
import type { Family, JsonObject } from './documents.js';

export class DocumentSchemas {
  private readonly contract: Contract;

  constructor(family: Family, document: JsonObject) {
    this.contract = compileContract(family, document as Contract['document']);
  }

  /** The validator of the schema at `segments` (compiled once; throws when it cannot compile). */
  validator(segments: readonly string[]): ValidateFunction {
    return this.contract.schema(segments);
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
