/**
 * The contract, compiled once: for every operation of a bundled document
 * (generated/openapi/<family>.json) the validators of its request body, its path, query and header
 * parameters, and its responses. Nothing here restates a schema: everything comes from the
 * document, with its `#/components/...` references resolved by Ajv (JSON Schema 2020-12, as
 * OpenAPI 3.1 uses).
 *
 * Errors come back as `{ field, issue }` pairs (a JSON pointer into the body, or the name of a
 * parameter), which the families turn into their error format (D02, D03).
 */
import { readFile } from 'node:fs/promises';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv, registerDocument } from '../contract-schemas.js';


export type FamilyName = 'gateway' | 'extras' | 'web' | 'sdk';

/** One problem found by validation. */
export interface ValidationIssue {
  /** A JSON pointer into the body (`/transaction/amount`, `` for the body itself), or a parameter name. */
  field: string;
  /** What is wrong with it, for a person (`must be an integer`). */
  issue: string;
}

export type ParameterLocation = 'path' | 'query' | 'header';

export interface RequestInput {
  /** Path parameters as strings (already percent-decoded). */
  params: Record<string, string | undefined>;
  /** Query parameters: one string, or several for a repeated name. */
  query: Record<string, string | string[]>;
  /** Request headers with lower-case names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body; `undefined` when there was none. */
  body: unknown;
}

export interface ValidRequest {
  /** Path parameters, coerced to their declared types. */
  params: Record<string, unknown>;
  /** The declared query parameters, coerced to their declared types. */
  query: Record<string, unknown>;
  /** The declared header parameters (by their declared names), coerced. */
  headers: Record<string, unknown>;
  body: unknown;
}

export type RequestValidation =
  | { ok: true; value: ValidRequest }
  | { ok: false; location: 'body' | ParameterLocation; issues: ValidationIssue[] };

export interface ResponseValidation {
  /** False when the status is not documented for the operation. */
  documented: boolean;
  /** The documented content types of that status. */
  contentTypes: string[];
  /** Problems of the body (empty when it is valid, or nothing is documented for it). */
  issues: ValidationIssue[];
}

export interface ContractOperation {
  readonly operationId: string;
  /** Upper-case HTTP method. */
  readonly method: string;
  /** The path template (`/api/merchant/{id}`), or the webhook's name for a webhook. */
  readonly path: string;
  readonly webhook: boolean;
  /** The JSON request body: whether the operation has one and whether it is required. */
  readonly requestBody: { required: boolean } | undefined;
  /** Whether a security requirement applies (the route must authenticate). */
  readonly secured: boolean;
  /** The documented response statuses (`200`, `4XX`, `default`). */
  readonly responseStatuses: readonly string[];
  /** The declared parameters. */
  readonly parameters: readonly { name: string; in: ParameterLocation; required: boolean }[];
  validateRequest(input: RequestInput): RequestValidation;
  validateResponse(status: number, body: unknown, contentType?: string): ResponseValidation;
}

export interface Contract {
  readonly family: string;
  readonly document: OpenApiDocument;
  /** Every operation of `paths`, and every webhook (with `webhook: true`). */
  readonly operations: ReadonlyMap<string, ContractOperation>;
  /** The operation with this id, or an error naming the missing id. */
  operation(operationId: string): ContractOperation;
  /** The operation of `paths` whose template matches this method and path, if any. */
  match(method: string, pathname: string): { operation: ContractOperation; params: Record<string, string> } | undefined;
}

/** The bundled document of a family, next to this module in the package layout. */
export function documentUrl(family: string): URL {
  return new URL(`../../generated/openapi/${family}.json`, import.meta.url);
}

const cache = new Map<string, Promise<Contract>>();

/** Loads and compiles the bundled document of `family` (once per process and file). */
export function loadContract(family: string, url: URL = documentUrl(family)): Promise<Contract> {
  const key = `${family} ${url.href}`;
  let contract = cache.get(key);
  if (contract === undefined) {
    contract = readFile(url, 'utf8')
      .then((text) => compileContract(family, JSON.parse(text) as OpenApiDocument))
      .catch((error: unknown) => {
        cache.delete(key);
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(
          `cannot load the ${family} contract from ${url.pathname}: ${reason} (run \`npm run generate\`)`,
          { cause: error },
        );
      });
    cache.set(key, contract);
  }
  return contract;
}

// ---------------------------------------------------------------------------------------------
// The document's shape, as far as this module reads it.

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

interface OperationObject {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
  security?: Record<string, string[]>[];
}

interface ParameterObject {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Compiles every operation of a document. Exported for tests; use {@link loadContract}. */
export function compileContract(family: string, document: OpenApiDocument): Contract {
  const base = `https://paylater.invalid/contract/${encodeURIComponent(family)}/${++compiled}.json`;
  const bodies = sharedAjv(false);
  const parameters = sharedAjv(true);
  registerDocument(bodies, document, base);
  registerDocument(parameters, document, base);
  const operations = new Map<string, ContractOperation>();
  const templates: { method: string; regex: RegExp; names: string[]; operation: ContractOperation }[] = [];

  const visit = (group: 'paths' | 'webhooks', items: Record<string, PathItem> | undefined) => {
    for (const [key, rawItem] of Object.entries(items ?? {})) {
      const itemPointer = `#/${group}/${escapePointer(key)}`;
      const item = resolve(document, rawItem, itemPointer);
      const pathItem = item.node as PathItem;
      for (const method of METHODS) {
        if (pathItem[method] === undefined) continue;
        const pointer = `${item.pointer}/${method}`;
        const operation = pathItem[method] as OperationObject;
        const operationId = operation.operationId ?? `${method} ${key}`;
        if (operations.has(operationId)) throw new Error(`duplicate operationId ${operationId} in ${family}`);
        const compiled = compileOperation({
          document,
          base,
          bodies,
          parameters,
          operation,
          pointer,
          pathItemParameters: (pathItem.parameters ?? []).map((parameter, index) =>
            resolve(document, parameter, `${item.pointer}/parameters/${index}`),
          ),
          operationId,
          method: method.toUpperCase(),
          path: key,
          webhook: group === 'webhooks',
        });
        operations.set(operationId, compiled);
        if (group === 'paths') {
          const names: string[] = [];
          const regex = new RegExp(
            `^${key
              .split(/(\{[^}]+\})/)
              .map((part) => {
                const name = /^\{([^}]+)\}$/.exec(part)?.[1];
                if (name !== undefined) {
                  names.push(name);
                  return '([^/]+)';
                }
                return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
              })
              .join('')}$`,
          );
          templates.push({ method: method.toUpperCase(), regex, names, operation: compiled });
        }
      }
    }
  };
  visit('paths', document.paths);
  visit('webhooks', document.webhooks);
  // A literal segment wins over a template one, as in the router (`/api/merchant/transaction`
  // before `/api/merchant/{id}`).
  templates.sort((a, b) => specificity(a.operation.path, b.operation.path));

  return {
    family,
    document,
    operations,
    operation(operationId) {
      const found = operations.get(operationId);
      if (found === undefined) throw new Error(`the ${family} contract has no operation ${operationId}`);
      return found;
    },
    match(method, pathname) {
      for (const template of templates) {
        if (template.method !== method.toUpperCase()) continue;
        const found = template.regex.exec(pathname);
        if (found === null) continue;
        const params: Record<string, string> = {};
        template.names.forEach((name, index) => {
          params[name] = safeDecode(found[index + 1] ?? '');
        });
        return { operation: template.operation, params };
      }
      return undefined;
    },
  };
}

let compiled = 0;
const instances = new Map<boolean, Ajv2020>();

/**
 * One Ajv for bodies and one (coercing) for parameters, shared by every document of the process:
 * Ajv's first compilation is costly, later ones are cheap.
 */
function sharedAjv(coerce: boolean): Ajv2020 {
  let ajv = instances.get(coerce);
  if (ajv === undefined) {
    ajv = createContractAjv({ coerce });
    instances.set(coerce, ajv);
  }
  return ajv;
}

interface CompileInput {
  document: OpenApiDocument;
  base: string;
  bodies: Ajv2020;
  parameters: Ajv2020;
  operation: OperationObject;
  pointer: string;
  pathItemParameters: Resolved[];
  operationId: string;
  method: string;
  path: string;
  webhook: boolean;
}

interface CompiledParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  /** Whether the schema is an array (a repeated query parameter). */
  array: boolean;
  /** Validates `{ value }`, coercing `value` in place. */
  validate: ValidateFunction | undefined;
}

function compileOperation(input: CompileInput): ContractOperation {
  const { document, base, bodies, parameters, operation, pointer } = input;
  const ref = (at: string) => ({ $ref: `${base}${at}` });

  // Parameters: the operation's override the path item's of the same name and location.
  const declared = new Map<string, { parameter: ParameterObject; pointer: string }>();
  const operationParameters = (operation.parameters ?? []).map((parameter, index) =>
    resolve(document, parameter, `${pointer}/parameters/${index}`),
  );
  for (const resolved of [...input.pathItemParameters, ...operationParameters]) {
    const parameter = resolved.node as ParameterObject;
    if (parameter.in === 'cookie') continue;
    declared.set(`${parameter.in} ${parameter.name.toLowerCase()}`, { parameter, pointer: resolved.pointer });
  }
  const compiledParameters: CompiledParameter[] = [...declared.values()].map(({ parameter, pointer: at }) => ({
    name: parameter.name,
    in: parameter.in as ParameterLocation,
    required: parameter.in === 'path' || parameter.required === true,
    array: parameter.schema !== undefined && (resolve(document, parameter.schema, `${at}/schema`).node as { type?: unknown }).type === 'array',
    validate:
      parameter.schema === undefined
        ? undefined
        : parameters.compile({ type: 'object', properties: { value: ref(`${at}/schema`) } }),
  }));

  // The JSON request body.
  let requestBody: { required: boolean } | undefined;
  let validateBody: ValidateFunction | undefined;
  if (operation.requestBody !== undefined) {
    const resolved = resolve(document, operation.requestBody, `${pointer}/requestBody`);
    const node = resolved.node as { required?: boolean; content?: Record<string, { schema?: unknown }> };
    const json = node.content?.['application/json'];
    if (json !== undefined) {
      requestBody = { required: node.required === true };
      if (json.schema !== undefined) {
        validateBody = bodies.compile(ref(`${resolved.pointer}/content/application~1json/schema`));
      }
    }
  }

  // Responses: status -> content type -> validator. They serve self-checks only, so each one is
  // compiled on first use (once).
  const responses = new Map<string, Map<string, (() => ValidateFunction) | undefined>>();
  for (const [status, rawResponse] of Object.entries(operation.responses ?? {})) {
    const resolved = resolve(document, rawResponse, `${pointer}/responses/${escapePointer(status)}`);
    const node = resolved.node as { content?: Record<string, { schema?: unknown }> };
    const byType = new Map<string, (() => ValidateFunction) | undefined>();
    for (const [type, media] of Object.entries(node.content ?? {})) {
      byType.set(
        type,
        media.schema !== undefined && isJsonType(type)
          ? once(() => bodies.compile(ref(`${resolved.pointer}/content/${escapePointer(type)}/schema`)))
          : undefined,
      );
    }
    responses.set(status.toUpperCase(), byType);
  }

  const security = operation.security ?? document.security ?? [];
  const secured = security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0);

  return {
    operationId: input.operationId,
    method: input.method,
    path: input.path,
    webhook: input.webhook,
    requestBody,
    secured,
    responseStatuses: [...responses.keys()],
    parameters: compiledParameters.map(({ name, in: location, required }) => ({ name, in: location, required })),

    validateRequest(request) {
      const value: ValidRequest = { params: {}, query: {}, headers: {}, body: request.body };
      for (const location of ['path', 'query', 'header'] as const) {
        const issues: ValidationIssue[] = [];
        for (const parameter of compiledParameters) {
          if (parameter.in !== location) continue;
          const raw = rawParameter(request, parameter);
          if (raw === undefined) {
            if (parameter.required) issues.push({ field: parameter.name, issue: 'is required' });
            continue;
          }
          if (Array.isArray(raw) && !acceptsArray(parameter)) {
            issues.push({ field: parameter.name, issue: 'must be given once' });
            continue;
          }
          // Ajv coerces in place: the value is validated as a property of a holder object.
          const holder: Record<string, unknown> = { value: raw };
          const validate = parameter.validate;
          if (validate !== undefined && !validate(holder)) {
            issues.push(...toIssues(validate.errors ?? [], parameter.name, location, '/value'));
            continue;
          }
          const target = location === 'path' ? value.params : location === 'query' ? value.query : value.headers;
          target[parameter.name] = holder.value;
        }
        if (issues.length > 0) return { ok: false, location, issues: dedupe(issues) };
      }

      if (requestBody !== undefined) {
        if (request.body === undefined) {
          if (requestBody.required) return { ok: false, location: 'body', issues: [{ field: '', issue: 'is required' }] };
        } else if (validateBody !== undefined && !validateBody(request.body)) {
          return { ok: false, location: 'body', issues: dedupe(toIssues(validateBody.errors ?? [], '', 'body')) };
        }
      }
      return { ok: true, value };
    },

    validateResponse(status, body, contentType = 'application/json') {
      const code = String(status);
      const entry =
        responses.get(code) ?? responses.get(`${code[0] ?? ''}XX`) ?? responses.get('DEFAULT');
      if (entry === undefined) return { documented: false, contentTypes: [], issues: [] };
      const contentTypes = [...entry.keys()];
      if (contentTypes.length === 0) {
        return { documented: true, contentTypes, issues: [] };
      }
      const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
      if (!entry.has(type)) {
        return {
          documented: true,
          contentTypes,
          issues: [{ field: 'Content-Type', issue: `must be one of ${contentTypes.join(', ')} (got ${type || 'none'})` }],
        };
      }
      const validate = entry.get(type)?.();
      if (validate === undefined || validate(body)) return { documented: true, contentTypes, issues: [] };
      return { documented: true, contentTypes, issues: dedupe(toIssues(validate.errors ?? [], '', 'body')) };
    },
  };
}

function rawParameter(request: RequestInput, parameter: CompiledParameter): string | string[] | undefined {
  switch (parameter.in) {
    case 'path':
      return request.params[parameter.name];
    case 'query':
      return request.query[parameter.name];
    case 'header':
      return request.headers[parameter.name.toLowerCase()];
  }
}

function acceptsArray(parameter: CompiledParameter): boolean {
  return parameter.array;
}

function describeLocation(location: ParameterLocation): string {
  return location === 'path' ? 'path parameter' : location === 'query' ? 'query parameter' : 'header';
}

/** Turns Ajv errors into issues; `prefix` is the parameter name ('' for the body). */
function toIssues(
  errors: ErrorObject[],
  prefix: string,
  location: 'body' | ParameterLocation,
  strip = '',
): ValidationIssue[] {
  const meaningful = errors.filter((error) => !['anyOf', 'oneOf', 'if', 'allOf'].includes(error.keyword));
  const list = meaningful.length > 0 ? meaningful : errors;
  return list.map((error) => {
    let pointer = error.instancePath.startsWith(strip) ? error.instancePath.slice(strip.length) : error.instancePath;
    let issue = error.message ?? 'is invalid';
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        pointer = `${pointer}/${escapePointer(String(params.missingProperty))}`;
        issue = 'is required';
        break;
      case 'additionalProperties':
        pointer = `${pointer}/${escapePointer(String(params.additionalProperty))}`;
        issue = 'is not allowed';
        break;
      case 'enum':
        issue = `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
        break;
      case 'pattern':
        issue = `must match ${String(params.pattern)}`;
        break;
      case 'minProperties': {
        const limit = Number(params.limit);
        issue = `must have at least ${limit} ${limit === 1 ? 'property' : 'properties'}`;
        break;
      }
      case 'format':
        issue = `must be a valid ${String(params.format)}`;
        break;
      default:
        break;
    }
    const field = location === 'body' ? pointer : `${prefix}${pointer}`;
    return { field, issue };
  });
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  const result: ValidationIssue[] = [];
  for (const issue of issues) {
    const key = `${issue.field}\u0000${issue.issue}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(issue);
    if (result.length >= 20) break;
  }
  return result;
}

/** One line for people: `/amount must be >= 100; /userId is required`. */
export function describeIssues(issues: readonly ValidationIssue[], location: 'body' | ParameterLocation): string {
  return issues
    .map(({ field, issue }) => {
      if (location === 'body') return field === '' ? `the request body ${issue}` : `${field} ${issue}`;
      return `${describeLocation(location)} ${field} ${issue}`;
    })
    .join('; ');
}

interface Resolved {
  node: unknown;
  /** Where the node is in the document, as a JSON pointer fragment (`#/components/...`). */
  pointer: string;
}

/** Follows local `$ref`s of OpenAPI objects (parameters, request bodies, responses, path items). */
function resolve(document: OpenApiDocument, node: unknown, pointer: string): Resolved {
  let current: Resolved = { node, pointer };
  for (let depth = 0; depth < 32; depth++) {
    const ref = (current.node as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string') return current;
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported, found ${ref}`);
    let target: unknown = document;
    for (const part of ref.slice(2).split('/')) {
      target = (target as Record<string, unknown> | undefined)?.[unescapePointer(part)];
    }
    if (target === undefined) throw new Error(`unresolved reference ${ref}`);
    current = { node: target, pointer: ref };
  }
  throw new Error(`reference chain too deep at ${pointer}`);
}

/** Orders two path templates: negative when `a` is more specific (a literal segment first). */
function specificity(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const literalA = !/^\{.*\}$/.test(left[index]!);
    const literalB = !/^\{.*\}$/.test(right[index]!);
    if (literalA !== literalB) return literalA ? -1 : 1;
  }
  return 0;
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || /\+json$/.test(type);
}

export function escapePointer(part: string): string {
  return part.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
