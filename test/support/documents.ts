/**
 * The bundled documents under generated/openapi/ (read with the contract model, src/contract/),
 * loaded once per test file, and the small tools the contract tests use to read them as data:
 * JSON pointers, `$ref` resolution (the model's) and the list of operations of a document.
 *
 * A family whose bundle is missing or unreadable is not an exception at load time: its
 * {@link Bundle} carries a `problem` that {@link requireDocument} throws inside a test, so the
 * suite names the missing file instead of crashing while it collects tests.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deref as derefModel, FAMILIES, isObject, pointerGet, readDocument, type Family, type JsonObject } from '../../src/contract/index.js';

export { FAMILIES, isObject, type Family, type JsonObject };

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
  const path = join(ROOT, file);
  if (!existsSync(path)) {
    return { family, file, document: undefined, problem: `${file} is missing: run npm run generate` };
  }
  try {
    return { family, file, document: readDocument(family, path) as JsonObject, problem: undefined };
  } catch (error) {
    return { family, file, document: undefined, problem: `${file}: ${error instanceof Error ? error.message : String(error)}` };
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

/** `['paths', '/a/{id}', 'get']` -> `#/paths/~1a~1{id}/get` (JSON pointer as a URI fragment, unencoded). */
export function pointer(segments: readonly string[]): string {
  return `#${segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')}`;
}

/** A readable location for test names and messages: `paths › /a/{id} › get`. */
export function where(segments: readonly string[]): string {
  return segments.join(' › ');
}

/** The value at an internal reference (`#/components/schemas/Amount`), or undefined. */
export function resolvePointer(document: JsonObject, ref: string): unknown {
  return pointerGet(document, ref);
}

/**
 * Follows `$ref` until a value without one is reached. A bundled document only has internal
 * references; an external or dangling one is an error of the bundle and throws.
 */
export function deref(document: JsonObject, value: unknown): unknown {
  return derefModel(document, value);
}

/** Like {@link deref}, for a place where only an object makes sense. */
export function derefObject(document: JsonObject, value: unknown): JsonObject | undefined {
  const target = deref(document, value);
  return isObject(target) ? target : undefined;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OperationEntry {
  /** `path` for an entry of `paths`, `webhook` for an entry of `webhooks`. */
  kind: 'path' | 'webhook';
  /** The path (`/api/merchant/{id}`) or the webhook's name. */
  key: string;
  method: (typeof HTTP_METHODS)[number];
  operation: JsonObject;
  /** The (dereferenced) path item holding the operation: its `parameters` apply too. */
  pathItem: JsonObject;
  /** Where the operation is, e.g. `['paths', '/api/merchant', 'post']`. */
  segments: string[];
}

/** Every operation of `paths` and `webhooks`, path items dereferenced. */
export function operationsOf(document: JsonObject): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const kind of ['path', 'webhook'] as const) {
    const section = kind === 'path' ? 'paths' : 'webhooks';
    const items = document[section];
    if (!isObject(items)) continue;
    for (const [key, rawItem] of Object.entries(items)) {
      const pathItem = derefObject(document, rawItem);
      if (pathItem === undefined) continue;
      for (const method of HTTP_METHODS) {
        const operation = pathItem[method];
        if (isObject(operation)) entries.push({ kind, key, method, operation, pathItem, segments: [section, key, method] });
      }
    }
  }
  return entries;
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

/** The parameters that apply to an operation: the path item's, overridden by the operation's. */
export function parametersOf(document: JsonObject, entry: OperationEntry): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const list of [entry.pathItem.parameters, entry.operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const parameter = derefObject(document, raw);
      if (parameter !== undefined) byKey.set(`${String(parameter.in)}:${String(parameter.name)}`, parameter);
    }
  }
  return [...byKey.values()];
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
