/**
 * The bundled documents (generated/openapi/<family>.json): where they are, reading one, and
 * following its internal references. A bundle has only local `#/...` references, so JSON
 * pointers are all the resolution it needs.
 */
import { readFileSync } from 'node:fs';
import { FAMILIES, familyInfo, isFamily } from './families.js';

/** The parts of an OpenAPI 3.1 document the model reads. */
export interface OpenApiDocument {
  openapi: string;
  paths?: Record<string, PathItem>;
  webhooks?: Record<string, PathItem>;
  components?: Record<string, Record<string, unknown>>;
  security?: Record<string, string[]>[];
  [key: string]: unknown;
}

interface PathItem {
  $ref?: string;
  parameters?: unknown[];
  [method: string]: unknown;
}

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The bundled document of a family, in the package layout (`dist/contract/` or `src/contract/`). */
export function documentUrl(family: string): URL {
  if (!isFamily(family)) {
    throw new Error(`no bundled document for the family ${JSON.stringify(family)}; the families are ${FAMILIES.join(', ')}`);
  }
  return familyInfo(family).document();
}

/** Reads and parses a bundled document; the error names the file and how to make it. */
export function readDocument(family: string, location: URL | string = documentUrl(family)): OpenApiDocument {
  const path = typeof location === 'string' ? location : location.pathname;
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(location, 'utf8'));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot load the ${family} contract from ${path}: ${reason} (run \`npm run generate\`)`, { cause: error });
  }
  if (!isObject(document) || typeof document.openapi !== 'string') {
    throw new Error(`cannot load the ${family} contract from ${path}: not an OpenAPI document (run \`npm run generate\`)`);
  }
  return document as OpenApiDocument;
}

/** One segment of a JSON pointer: `~` and `/` escaped. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The value at a local pointer (`#/components/schemas/Amount`; percent-encoding allowed), or undefined. */
function pointerGet(document: unknown, pointer: string): unknown {
  if (pointer === '#') return document;
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of pointer.slice(2).split('/')) {
    const segment = unescapePointer(safeDecode(raw));
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = node[segment];
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

export interface Resolved {
  node: unknown;
  /** Where the node is in the document, as a JSON pointer fragment (`#/components/...`). */
  pointer: string;
}

/**
 * Follows `$ref`s from `node` (found at `pointer`) to a value without one. A reference that is not
 * local, does not resolve or loops is an error of the bundle and throws.
 */
export function resolveRef(document: unknown, node: unknown, pointer: string): Resolved {
  let current: Resolved = { node, pointer };
  for (let depth = 0; depth < 32; depth++) {
    const ref = isObject(current.node) ? current.node.$ref : undefined;
    if (typeof ref !== 'string') return current;
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported, found ${ref}`);
    const target = pointerGet(document, ref);
    if (target === undefined) throw new Error(`$ref ${ref} does not resolve inside the bundled document`);
    current = { node: target, pointer: ref };
  }
  throw new Error(`$ref chain too deep (or a cycle) at ${pointer}`);
}

/** The methods a path item can hold, in OpenAPI's order. */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One operation of a document's `paths` or `webhooks`. */
export interface OperationEntry {
  /** `path` for an entry of `paths`, `webhook` for an entry of `webhooks`. */
  kind: 'path' | 'webhook';
  /** The path (`/api/merchant/{id}`) or the webhook's name. */
  key: string;
  method: (typeof HTTP_METHODS)[number];
  operation: JsonObject;
  /** The path item holding the operation, its reference followed: its `parameters` apply too. */
  pathItem: JsonObject;
  /** Where the path item is, as a JSON pointer fragment (`#/paths/~1api~1merchant`, or its reference's target). */
  pointer: string;
}

/** Every operation of `paths`, then of `webhooks`, in the document's order. */
export function operationEntries(document: JsonObject): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const [group, kind] of [['paths', 'path'], ['webhooks', 'webhook']] as const) {
    const items = document[group];
    if (!isObject(items)) continue;
    for (const [key, rawItem] of Object.entries(items)) {
      const { node: pathItem, pointer } = resolveRef(document, rawItem, `#/${group}/${escapePointer(key)}`);
      if (!isObject(pathItem)) continue;
      for (const method of HTTP_METHODS) {
        const operation = pathItem[method];
        if (isObject(operation)) entries.push({ kind, key, method, operation, pathItem, pointer });
      }
    }
  }
  return entries;
}

/** What `node` refers to ({@link resolveRef}) when it is an object; undefined when it is not. */
export function derefObject(document: unknown, node: unknown): JsonObject | undefined {
  const value = resolveRef(document, node, '#').node;
  return isObject(value) ? value : undefined;
}

/** A percent-decoded URL part, or the part as it is when it is not valid percent-encoding. */
export function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
