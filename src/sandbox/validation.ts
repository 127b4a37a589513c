/**
 * The contract as the sandbox uses it: the contract model (src/contract/) of a family, with every
 * request validator compiled at start, and its answers worded for the sandbox's error bodies as
 * `{ field, issue }` pairs (a JSON pointer into the body, or the name of a parameter), which the
 * families turn into their error format: {@link validateRequest}, {@link validateResponse}.
 * An amount's issue names its unit, integer paise, and its bounds in paise and rupees.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import {
  compileContract as compileModel,
  contractOf,
  escapePointer,
  type Contract,
  type ContractOperation,
  type Family,
  type OpenApiDocument,
  type ParameterLocation,
  type RequestInput,
  type RequestProblem,
  type ResponseCheck,
  type ValidRequest,
} from '../contract/index.js';
import { amountIssue, amountProblemOf, isAmountField } from './amounts.js';

export type { Contract, ContractOperation, OpenApiDocument, ParameterLocation, RequestInput };
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

/** The contract of `family` (its bundled document, or the one at `url`), request validators compiled. */
export async function loadContract(family: string, url?: URL): Promise<Contract> {
  return contractOf(family, url).precompile();
}

/** Compiles a document given as an object (tests). */
export function compileContract(family: string, document: OpenApiDocument): Contract {
  return compileModel(family, document).precompile();
}

/** Checks a request of `operation`; its problems worded as issues. */
export function validateRequest(operation: ContractOperation, input: RequestInput): RequestValidation {
  const checked = operation.checkRequest(input);
  if (checked.ok) return checked;
  return { ok: false, location: checked.location, issues: dedupe(checked.problems.flatMap(toIssuesOf)) };
}

/** Checks a response of `operation`; its problems worded as issues. */
export function validateResponse(operation: ContractOperation, status: number, body: unknown, contentType?: string): ResponseValidation {
  const checked = operation.checkResponse(status, body, contentType);
  const { documented, contentTypes } = checked;
  if (checked.wrongContentType !== undefined) {
    const issue = `must be one of ${contentTypes.join(', ')} (got ${checked.wrongContentType || 'none'})`;
    return { documented, contentTypes, issues: [{ field: 'Content-Type', issue }] };
  }
  return { documented, contentTypes, issues: dedupe(toIssues(checked.errors, '', 'body')) };
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

/** The contract's patterns that integrators meet most, in words: the raw expression helps nobody. */
const PATTERN_WORDS = new Map<string, string>([
  ['^\\+91[0-9]{10}$', 'must be +91 and the ten digits of an Indian mobile number, without spaces, e.g. +919000000001'],
  ['^\\+91(91)?[0-9]{10}$', 'must be +91 and the ten digits of an Indian mobile number, without spaces, e.g. +919000000001'],
  [
    '^\\(?\\+[-. ()]*9[-. ()]*1(?:[-. ()]*9[-. ()]*1)?(?:[-. ()]*[0-9]){10}[-. ()]*$',
    'must be +91 and the ten digits of an Indian mobile number (spaces, hyphens, dots and parentheses between them are accepted), e.g. +919000000001',
  ],
  ['^#[0-9A-Fa-f]{6}$', 'must be a colour written # and six hex digits, e.g. #1A73E8'],
  ['^(#[0-9A-Fa-f]{6})?$', 'must be empty or a colour written # and six hex digits, e.g. #1A73E8'],
  ['^[A-Za-z0-9_-]{1,64}$', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_" and "-"'],
  ['^[^\\x00-\\x1F\\x7F]*$', 'must not contain control characters (line breaks and tabs included)'],
  ['^https?://', 'must be an http:// or https:// URL'],
]);

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
        issue = PATTERN_WORDS.get(String(params.pattern)) ?? `must match ${String(params.pattern)}`;
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
    // An amount's issue says its unit, and its bounds in paise and rupees.
    const amount = isAmountField(field) ? amountProblemOf(error.keyword, params.limit) : undefined;
    return { field, issue: amount === undefined ? issue : amountIssue(amount) };
  });
}

/** The first 20 distinct issues. */
function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const distinct = new Map(issues.map((issue) => [`${issue.field}\u0000${issue.issue}`, issue]));
  return [...distinct.values()].slice(0, 20);
}

/** One line for people: `/amount must be at least 100 paise (₹1); ...; /userId is required`. */
export function describeIssues(issues: readonly ValidationIssue[], location: 'body' | ParameterLocation): string {
  return issues
    .map(({ field, issue }) => {
      if (location === 'body') return field === '' ? `the request body ${issue}` : `${field} ${issue}`;
      const where = location === 'path' ? 'path parameter' : location === 'query' ? 'query parameter' : 'header';
      return `${where} ${field} ${issue}`;
    })
    .join('; ');
}
