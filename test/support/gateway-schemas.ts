/**
 * The gateway document's schemas read as data for the every-field tests
 * (test/sandbox/records-gateway*.test.ts): the properties a schema of the bundled document
 * declares, so a property added to the document is checked without touching those tests.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPOSITORY } from './hermetic.js';

interface Schema {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
}

const SCHEMAS = (JSON.parse(readFileSync(join(REPOSITORY, 'generated/openapi/gateway.json'), 'utf8')) as {
  components: { schemas: Record<string, Schema> };
}).components.schemas;

/** The properties a schema declares (through `$ref` and `allOf`), by schema or by its name under `components.schemas`. */
export function propertiesOf(schema: Schema | string): Record<string, Schema> {
  if (typeof schema === 'string') {
    const named = SCHEMAS[schema];
    if (named === undefined) throw new Error(`the gateway document has no schema ${schema}`);
    return propertiesOf(named);
  }
  if (schema.$ref !== undefined) return propertiesOf(schema.$ref.replace('#/components/schemas/', ''));
  return Object.assign({}, ...(schema.allOf ?? []).map(propertiesOf), schema.properties ?? {});
}

/** The property names a schema declares, sorted. */
export const propertyNames = (schema: Schema | string): string[] => Object.keys(propertiesOf(schema)).sort();
