/**
 * The bundled documents under generated/openapi/ as the contract model (src/contract/) loaded and
 * compiled them, once per test file, and the small tools the contract tests use to read them as
 * data: `$ref` resolution and the list of operations of a document (the model's own), and the
 * problems of a value against any schema of a document (the model's validators).
 *
 * A family whose bundle is missing or unreadable is not an exception at load time: its
 * {@link Bundle} carries a `problem` that {@link requireDocument} throws inside a test, so the
 * suite names the missing file instead of crashing while it collects tests.
 */
import { resolve } from 'node:path';
import {
  contractOf,
  derefObject,
  FAMILIES,
  HTTP_METHODS,
  isObject,
  operationEntries as operationsOf,
  type Family,
  type JsonObject,
  type OperationEntry,
} from '../../src/contract/index.js';

export { derefObject, FAMILIES, HTTP_METHODS, isObject, operationsOf, type Family, type JsonObject, type OperationEntry };

/** The repository's root folder. */
export const ROOT = resolve(import.meta.dirname, '../..');

export interface Bundle {
  family: Family;
  /** The bundle's path relative to the repository root, e.g. `generated/openapi/sdk.json`. */
  file: string;
  document: JsonObject | undefined;
  /** Why `document` is undefined. */
  problem: string | undefined;
}

function loadBundle(family: Family): Bundle {
  const file = `generated/openapi/${family}.json`;
  try {
    return { family, file, document: contractOf(family).document, problem: undefined };
  } catch (error) {
    // The model's error names the file and says to run `npm run generate`.
    return { family, file, document: undefined, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Every family's bundle, in the order of {@link FAMILIES}. */
export const BUNDLES: readonly Bundle[] = FAMILIES.map(loadBundle);

export function bundleOf(family: Family): Bundle {
  const found = BUNDLES.find((bundle) => bundle.family === family);
  if (found === undefined) throw new Error(`unknown family ${family}`);
  return found;
}

/** The bundle's document; throws the reason it is missing (inside a test, that fails the test). */
export function requireDocument(bundle: Bundle): JsonObject {
  if (bundle.document === undefined) throw new Error(bundle.problem);
  return bundle.document;
}

/** A readable location for test names and messages: `paths › /a/{id} › get`. */
export function where(segments: readonly string[]): string {
  return segments.join(' › ');
}

/** `POST /api/merchant` or `webhook refundStatus (post)`: how tests name an operation. */
export function operationName(family: Family, entry: OperationEntry): string {
  return entry.kind === 'path'
    ? `${family} ${entry.method.toUpperCase()} ${entry.key}`
    : `${family} webhook ${entry.key} (${entry.method.toUpperCase()})`;
}

/** A path with every template variable written `{}`: OpenAPI treats such paths as identical. */
export function pathShape(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}');
}

/**
 * The property names an object schema declares at its top level, following `$ref` and the
 * branches of `allOf`, `oneOf` and `anyOf`.
 */
export function topLevelProperties(document: JsonObject, schema: unknown, seen = new Set<unknown>()): Set<string> {
  const names = new Set<string>();
  const target = derefObject(document, schema);
  if (target === undefined || seen.has(target)) return names;
  seen.add(target);
  if (isObject(target.properties)) for (const name of Object.keys(target.properties)) names.add(name);
  for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
    const branches = target[keyword];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) for (const name of topLevelProperties(document, branch, seen)) names.add(name);
  }
  return names;
}

/** The problems of `value` against the schema at `segments` of a family's bundle, one line each; empty when valid. */
export function schemaProblems(family: Family, segments: readonly string[], value: unknown): string[] {
  const validate = contractOf(family).schema(segments);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath || '(root)'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
  );
}
