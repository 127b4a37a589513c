/**
 * The contract as the sandbox uses it: the contract model (src/contract/) of a family, with every
 * request validator compiled at start, and its answers worded for the sandbox's error bodies as
 * `{ field, issue }` pairs (a JSON pointer into the body, or the name of a parameter), which the
 * families turn into their error format (D02, D03).
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import {
  compileContract as compileModel,
  contractOf,
  escapePointer,
  type Contract as ContractModel,
  type ContractOperation as OperationModel,
  type Family,
  type OpenApiDocument,
  type ParameterLocation,
  type RequestInput,
  type RequestProblem,
  type ResponseCheck,
  type ValidRequest,
} from '../contract/index.js';

export type { OpenApiDocument, ParameterLocation, RequestInput, ValidRequest };
export type FamilyName = Family;

/** One problem found by validation. */
export interface ValidationIssue {
  /** A JSON pointer into the body (`/transaction/amount`, `` for the body itself), or a parameter name. */
  field: string;
  /** What is wrong with it, for a person (`must be an integer`). */
  issue: string;
}

export type RequestValidation =
  | { ok: true; value: ValidRequest }
  | { ok: false; location: 'body' | ParameterLocation; issues: ValidationIssue[] };

/** The model's response check (src/contract/model.ts), its problems worded as issues. */
export interface ResponseValidation extends Pick<ResponseCheck, 'documented' | 'contentTypes'> {
  /** Problems of the body (empty when it is valid, or nothing is documented for it). */
  issues: ValidationIssue[];
}

/** An operation of the model (src/contract/model.ts), its answers worded as issues. */
export interface ContractOperation extends OperationModel {
  validateRequest(input: RequestInput): RequestValidation;
  validateResponse(status: number, body: unknown, contentType?: string): ResponseValidation;
}

/** The model of a family (src/contract/model.ts) with the sandbox's operations. */
export interface Contract extends Pick<ContractModel, 'family' | 'document'> {
  readonly operations: ReadonlyMap<string, ContractOperation>;
  /** The operation with this id, or an error naming the missing id. */
  operation(operationId: string): ContractOperation;
}

/** The contract of `family` (its bundled document, or the one at `url`), request validators compiled. */
export async function loadContract(family: string, url?: URL): Promise<Contract> {
  return sandboxContract(contractOf(family, url));
}

/** Compiles a document given as an object (tests). */
export function compileContract(family: string, document: OpenApiDocument): Contract {
  return sandboxContract(compileModel(family, document));
}

const cache = new WeakMap<ContractModel, Contract>();

/** The sandbox's view of a model, made once per model. */
function sandboxContract(model: ContractModel): Contract {
  const cached = cache.get(model);
  if (cached !== undefined) return cached;
  model.precompile();
  const operations = new Map<string, ContractOperation>();
  for (const [id, operation] of model.operations) operations.set(id, sandboxOperation(operation));
  const contract: Contract = {
    family: model.family,
    document: model.document,
    operations,
    operation(operationId) {
      // A missing id: the model's own error names it.
      return operations.get(operationId) ?? sandboxOperation(model.operation(operationId));
    },
  };
  cache.set(model, contract);
  return contract;
}

function sandboxOperation(operation: OperationModel): ContractOperation {
  return {
    ...operation,
    validateRequest(input) {
      const checked = operation.checkRequest(input);
      if (checked.ok) return checked;
      return { ok: false, location: checked.location, issues: dedupe(checked.problems.flatMap(toIssuesOf)) };
    },
    validateResponse(status, body, contentType) {
      const checked = operation.checkResponse(status, body, contentType);
      const { documented, contentTypes } = checked;
      if (checked.wrongContentType !== undefined) {
        const issue = `must be one of ${contentTypes.join(', ')} (got ${checked.wrongContentType || 'none'})`;
        return { documented, contentTypes, issues: [{ field: 'Content-Type', issue }] };
      }
      if (checked.errors.length === 0) return { documented, contentTypes, issues: [] };
      return { documented, contentTypes, issues: dedupe(toIssues(checked.errors, '', 'body')) };
    },
  };
}

function toIssuesOf(problem: RequestProblem): ValidationIssue[] {
  switch (problem.kind) {
    case 'missing':
      return [{ field: problem.name, issue: 'is required' }];
    case 'repeated':
      return [{ field: problem.name, issue: 'must be given once' }];
    case 'invalid':
      return toIssues(problem.errors, problem.name, problem.location);
  }
}

/** Turns Ajv errors into issues; `prefix` is the parameter name ('' for the body). */
function toIssues(errors: ErrorObject[], prefix: string, location: 'body' | ParameterLocation): ValidationIssue[] {
  const meaningful = errors.filter((error) => !['anyOf', 'oneOf', 'if', 'allOf'].includes(error.keyword));
  const list = meaningful.length > 0 ? meaningful : errors;
  return list.map((error) => {
    let pointer = error.instancePath;
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

/** The first 20 distinct issues. */
function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const distinct = new Map(issues.map((issue) => [`${issue.field}\u0000${issue.issue}`, issue]));
  return [...distinct.values()].slice(0, 20);
}

/** One line for people: `/amount must be >= 100; /userId is required`. */
export function describeIssues(issues: readonly ValidationIssue[], location: 'body' | ParameterLocation): string {
  return issues
    .map(({ field, issue }) => {
      if (location === 'body') return field === '' ? `the request body ${issue}` : `${field} ${issue}`;
      const where = location === 'path' ? 'path parameter' : location === 'query' ? 'query parameter' : 'header';
      return `${where} ${field} ${issue}`;
    })
    .join('; ');
}
