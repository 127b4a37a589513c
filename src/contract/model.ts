/**
 * The contract model: one bundled document compiled once, answering "validate this request /
 * response / webhook / parameter of operation X" for everyone (the sandbox, the webhook helpers,
 * the contract kit, the tests). Nothing here restates a schema: every validator is compiled by Ajv
 * (./ajv.ts, one configuration) from the document, with its `#/components/...` references
 * resolved.
 *
 * Validators are compiled on first use and kept; {@link Contract.precompile} compiles every
 * request validator at once (a server does it at start). Answers carry Ajv's own errors: each
 * user words them for its audience (the sandbox's error bodies, the webhook errors, the kit's
 * report).
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createContractAjv, registerDocument } from './ajv.js';
import { documentUrl, escapePointer, operationEntries, readDocument, resolveRef, type OpenApiDocument, type OperationEntry } from './document.js';

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

/** One thing wrong with a request: a parameter or the body missing, repeated, or against its schema. */
export type RequestProblem =
  | { location: ParameterLocation; name: string; kind: 'missing' | 'repeated' }
  | { location: ParameterLocation; name: string; kind: 'invalid'; errors: ErrorObject[] }
  | { location: 'body'; name: ''; kind: 'missing' }
  | { location: 'body'; name: ''; kind: 'invalid'; errors: ErrorObject[] };

/** Path, then query, then headers, then the body: the first location with a problem is reported. */
type RequestCheck =
  | { ok: true; value: ValidRequest }
  | { ok: false; location: 'body' | ParameterLocation; problems: RequestProblem[] };

export interface ResponseCheck {
  /** False when the status is not documented for the operation. */
  documented: boolean;
  /** The documented content types of that status. */
  contentTypes: string[];
  /** The media type of the response (lower case, no parameters) when it is not one of them. */
  wrongContentType: string | undefined;
  /** Ajv's errors for the body (empty when it is valid, or nothing is documented for it). */
  errors: ErrorObject[];
}

interface ContractParameter {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly required: boolean;
  /** The parameter's schema, references at its top followed (undefined without one). */
  readonly schema: unknown;
  /** Validates (and coerces) one value; `errors` point inside the value (`` for the value itself). */
  validate(value: unknown): { ok: true; value: unknown } | { ok: false; errors: ErrorObject[] };
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
  /** The JSON request body's schema, references at its top resolved (undefined without one). */
  readonly requestSchema: unknown;
  /** The security requirements that apply (the operation's, else the document's). */
  readonly security: readonly Record<string, string[]>[];
  /** Whether a security requirement applies (the route must authenticate). */
  readonly secured: boolean;
  /** The declared parameters (the path item's, overridden by the operation's); no cookies. */
  readonly parameters: readonly ContractParameter[];
  parameter(location: ParameterLocation, name: string): ContractParameter | undefined;
  checkRequest(input: RequestInput): RequestCheck;
  /** Ajv's errors for a JSON request body (a webhook's payload); empty when it is valid. */
  checkBody(body: unknown): ErrorObject[];
  /** The response of `status` (exact, `NXX`, `default`) as `contentType`, against the document. */
  checkResponse(status: number, body: unknown, contentType?: string): ResponseCheck;
}

export interface Contract {
  readonly family: string;
  readonly document: OpenApiDocument;
  /** Every operation of `paths`, and every webhook (with `webhook: true`), by operationId. */
  readonly operations: ReadonlyMap<string, ContractOperation>;
  /** The operation with this id, or an error naming the missing id. */
  operation(operationId: string): ContractOperation;
  /** The operation of `paths` at this path template (`/api/merchant/{id}`) and method. */
  at(path: string, method: string): ContractOperation | undefined;
  /** The webhook of this name (POST unless told). */
  webhook(name: string, method?: string): ContractOperation | undefined;
  /** The validator of the schema at `segments` anywhere in the document (`['components', 'schemas', 'Amount']`). */
  schema(segments: readonly string[]): ValidateFunction;
  /** Compiles every request validator now rather than on first use; returns the contract. */
  precompile(): Contract;
}

// ---------------------------------------------------------------------------------------------
// Loading: each bundle once per process, on first use.

const loaded = new Map<string, Contract>();

/** The compiled contract of `family` from its bundled document (or the one at `location`), once per process. */
export function contractOf(family: string, location: URL | string = documentUrl(family)): Contract {
  const key = `${family} ${String(location)}`;
  let contract = loaded.get(key);
  if (contract === undefined) {
    contract = compileContract(family, readDocument(family, location));
    loaded.set(key, contract);
  }
  return contract;
}

// ---------------------------------------------------------------------------------------------
// Compiling.

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

let compiled = 0;

/**
 * One Ajv for bodies and one (coercing) for parameters, shared by every document of the process:
 * Ajv's first compilation is costly, later ones are cheap.
 */
const bodiesAjv = once(() => createContractAjv({ coerce: false }));
const parametersAjv = once(() => createContractAjv({ coerce: true }));

interface Compiler {
  document: OpenApiDocument;
  /** `{ $ref }` to a pointer of the document in the registered copy. */
  ref(pointer: string): { $ref: string };
}

/** Compiles a document (validators on first use). Prefer {@link contractOf} for a bundle. */
export function compileContract(family: string, document: OpenApiDocument): Contract {
  const base = `https://paylater.invalid/contract/${encodeURIComponent(family)}/${++compiled}.json`;
  const compiler: Compiler = { document, ref: (pointer) => ({ $ref: `${base}${pointer}` }) };
  registerDocument(bodiesAjv(), document, base);
  registerDocument(parametersAjv(), document, base);

  const operations = new Map<string, ContractOperation>();
  const byPath = new Map<string, ContractOperation>();
  for (const entry of operationEntries(document)) {
    const operationId = (entry.operation as OperationObject).operationId ?? `${entry.method} ${entry.key}`;
    if (operations.has(operationId)) throw new Error(`duplicate operationId ${operationId} in ${family}`);
    const made = compileOperation(compiler, entry, operationId);
    operations.set(operationId, made);
    byPath.set(`${entry.kind} ${made.method} ${entry.key}`, made);
  }

  const schemas = new Map<string, ValidateFunction>();

  return {
    family,
    document,
    operations,
    operation(operationId) {
      const found = operations.get(operationId);
      if (found === undefined) throw new Error(`the ${family} contract has no operation ${operationId}`);
      return found;
    },
    at(path, method) {
      return byPath.get(`path ${method.toUpperCase()} ${path}`);
    },
    webhook(name, method = 'post') {
      return byPath.get(`webhook ${method.toUpperCase()} ${name}`);
    },
    schema(segments) {
      const pointer = `#${segments.map((segment) => `/${encodeURIComponent(escapePointer(segment))}`).join('')}`;
      let validate = schemas.get(pointer);
      if (validate === undefined) {
        validate = bodiesAjv().compile(compiler.ref(pointer));
        schemas.set(pointer, validate);
      }
      return validate;
    },
    precompile() {
      for (const operation of operations.values()) {
        if (!operation.webhook) (operation as CompiledOperation).compileRequest();
      }
      return this;
    },
  };
}

interface CompiledParameter extends ContractParameter {
  /** Whether the schema is an array (a repeated query parameter). */
  readonly array: boolean;
  compile(): void;
}

interface CompiledOperation extends ContractOperation {
  compileRequest(): void;
}

function compileOperation(compiler: Compiler, entry: OperationEntry, operationId: string): CompiledOperation {
  const { document } = compiler;
  const operation = entry.operation as OperationObject;
  const pointer = `${entry.pointer}/${entry.method}`;
  const identity = { operationId, method: entry.method.toUpperCase(), path: entry.key, webhook: entry.kind === 'webhook' };

  // Parameters: the operation's override the path item's of the same name and location.
  const declared = new Map<string, { parameter: ParameterObject; pointer: string }>();
  for (const [list, at] of [[entry.pathItem.parameters, entry.pointer], [operation.parameters, pointer]] as const) {
    for (const [index, node] of ((list as unknown[] | undefined) ?? []).entries()) {
      const resolved = resolveRef(document, node, `${at}/parameters/${index}`);
      const parameter = resolved.node as ParameterObject;
      if (parameter.in === 'cookie') continue;
      declared.set(`${parameter.in} ${parameter.name.toLowerCase()}`, { parameter, pointer: resolved.pointer });
    }
  }
  const parameters: CompiledParameter[] = [...declared.values()].map(({ parameter, pointer: at }) => {
    const validator =
      parameter.schema === undefined
        ? undefined
        : once(() => parametersAjv().compile({ type: 'object', properties: { value: compiler.ref(`${at}/schema`) } }));
    const schema = parameter.schema === undefined ? undefined : resolveRef(document, parameter.schema, `${at}/schema`).node;
    return {
      name: parameter.name,
      in: parameter.in as ParameterLocation,
      required: parameter.in === 'path' || parameter.required === true,
      schema,
      array: (schema as { type?: unknown } | undefined)?.type === 'array',
      validate(value) {
        const validate = validator?.();
        // Ajv coerces in place: the value is validated as a property of a holder object.
        const holder: Record<string, unknown> = { value };
        if (validate === undefined || validate(holder)) return { ok: true, value: holder.value };
        return {
          ok: false,
          errors: (validate.errors ?? []).map((error) => ({
            ...error,
            instancePath: error.instancePath.startsWith('/value') ? error.instancePath.slice('/value'.length) : error.instancePath,
          })),
        };
      },
      compile() {
        validator?.();
      },
    };
  });

  // The JSON request body.
  let requestBody: { required: boolean } | undefined;
  let requestSchema: unknown;
  let validateBody: (() => ValidateFunction) | undefined;
  if (operation.requestBody !== undefined) {
    const resolved = resolveRef(document, operation.requestBody, `${pointer}/requestBody`);
    const node = resolved.node as { required?: boolean; content?: Record<string, { schema?: unknown }> };
    const json = node.content?.['application/json'];
    if (json !== undefined) {
      requestBody = { required: node.required === true };
      if (json.schema !== undefined) {
        const at = `${resolved.pointer}/content/application~1json/schema`;
        requestSchema = resolveRef(document, json.schema, at).node;
        validateBody = once(() => bodiesAjv().compile(compiler.ref(at)));
      }
    }
  }

  // Responses: status -> content type -> validator, each compiled on first use (once).
  const responses = new Map<string, Map<string, (() => ValidateFunction) | undefined>>();
  for (const [status, rawResponse] of Object.entries(operation.responses ?? {})) {
    const resolved = resolveRef(document, rawResponse, `${pointer}/responses/${escapePointer(status)}`);
    const node = resolved.node as { content?: Record<string, { schema?: unknown }> };
    const byType = new Map<string, (() => ValidateFunction) | undefined>();
    for (const [type, media] of Object.entries(node.content ?? {})) {
      byType.set(
        type.toLowerCase(),
        media.schema !== undefined && isJsonType(type)
          ? once(() => bodiesAjv().compile(compiler.ref(`${resolved.pointer}/content/${escapePointer(type)}/schema`)))
          : undefined,
      );
    }
    responses.set(status.toUpperCase(), byType);
  }

  // The parameters of each location, in their order: a request is checked location by location.
  const byLocation: Record<ParameterLocation, CompiledParameter[]> = {
    path: parameters.filter((parameter) => parameter.in === 'path'),
    query: parameters.filter((parameter) => parameter.in === 'query'),
    header: parameters.filter((parameter) => parameter.in === 'header'),
  };

  const security = operation.security ?? document.security ?? [];
  const secured = security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0);

  return {
    ...identity,
    requestBody,
    requestSchema,
    security,
    secured,
    parameters,

    parameter(location, name) {
      const lower = name.toLowerCase();
      return parameters.find((parameter) => parameter.in === location && parameter.name.toLowerCase() === lower);
    },

    compileRequest() {
      for (const parameter of parameters) parameter.compile();
      validateBody?.();
    },

    checkRequest(request) {
      const value: ValidRequest = { params: {}, query: {}, headers: {}, body: request.body };
      for (const location of PARAMETER_LOCATIONS) {
        const declaredHere = byLocation[location];
        if (declaredHere.length === 0) continue;
        const target = location === 'path' ? value.params : location === 'query' ? value.query : value.headers;
        let problems: RequestProblem[] | undefined;
        for (const parameter of declaredHere) {
          const raw = rawParameter(request, parameter);
          if (raw === undefined) {
            if (parameter.required) (problems ??= []).push({ location, name: parameter.name, kind: 'missing' });
            continue;
          }
          if (Array.isArray(raw) && !parameter.array) {
            (problems ??= []).push({ location, name: parameter.name, kind: 'repeated' });
            continue;
          }
          const checked = parameter.validate(raw);
          if (!checked.ok) {
            (problems ??= []).push({ location, name: parameter.name, kind: 'invalid', errors: checked.errors });
            continue;
          }
          target[parameter.name] = checked.value;
        }
        if (problems !== undefined) return { ok: false, location, problems };
      }

      if (requestBody !== undefined) {
        if (request.body === undefined) {
          if (requestBody.required) return { ok: false, location: 'body', problems: [{ location: 'body', name: '', kind: 'missing' }] };
        } else {
          const validate = validateBody?.();
          if (validate !== undefined && !validate(request.body)) {
            return { ok: false, location: 'body', problems: [{ location: 'body', name: '', kind: 'invalid', errors: validate.errors ?? [] }] };
          }
        }
      }
      return { ok: true, value };
    },

    checkBody(body) {
      const validate = validateBody?.();
      if (validate === undefined) throw new Error(`${identity.operationId} has no JSON request body schema`);
      return validate(body) ? [] : [...(validate.errors ?? [])];
    },

    checkResponse(status, body, contentType = 'application/json') {
      const code = String(status);
      const entry = responses.get(code) ?? responses.get(`${code[0] ?? ''}XX`) ?? responses.get('DEFAULT');
      const contentTypes = [...(entry?.keys() ?? [])];
      const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
      // Nothing to check when the status is not documented, or documented without content.
      const wrongContentType = contentTypes.length > 0 && !entry?.has(type) ? type : undefined;
      const validate = wrongContentType === undefined ? entry?.get(type)?.() : undefined;
      const errors = validate === undefined || validate(body) ? [] : [...(validate.errors ?? [])];
      return { documented: entry !== undefined, contentTypes, wrongContentType, errors };
    },
  };
}

/** Path, then query, then headers: the order in which a request's parameters are checked. */
const PARAMETER_LOCATIONS: readonly ParameterLocation[] = ['path', 'query', 'header'];

function rawParameter(request: RequestInput, parameter: ContractParameter): string | string[] | undefined {
  if (parameter.in === 'header') return request.headers[parameter.name.toLowerCase()];
  return (parameter.in === 'path' ? request.params : request.query)[parameter.name];
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** `application/json` or a `+json` type (`application/problem+json`). */
export function isJsonType(type: string): boolean {
  const lower = type.toLowerCase();
  return lower === 'application/json' || /^application\/[^;]+\+json$/.test(lower);
}
