/**
 * The real response check of the contract kit. Dredd 14 does not validate OpenAPI 3 response
 * bodies (it ignores allOf/anyOf, pattern, formats, additionalProperties...), so every response is
 * checked here with the contract model (src/contract/): status code, Content-Type, and the body
 * against the schema of (path, method, status, media type).
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { isJsonType, type Contract } from '../../src/contract/index.js';
import type { Operation, RealResponse } from './types.js';

const MAX_ERRORS = 5;
const EXCERPT = 300;

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return String(contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A header's value (names in any case; several values joined). */
export function header(headers: Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

function excerpt(text: string | undefined): string {
  const flat = String(text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}...` : flat;
}

function describeAjvError(error: ErrorObject): string {
  const where = error.instancePath || '/';
  let text = `${where} ${error.message}`;
  const params = error.params as { allowedValues?: unknown[]; additionalProperty?: string };
  if (error.keyword === 'enum' && params.allowedValues) {
    text += ` (${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')})`;
  } else if (error.keyword === 'additionalProperties') {
    text += ` ('${params.additionalProperty}')`;
  }
  return text;
}

/** What is wrong with a real response, as a list of sentences (empty when it is right). */
export function checkResponse(contract: Contract, expected: Operation, real: RealResponse | undefined): string[] {
  if (!real) return ['no response was received'];
  const status = Number(expected.status);
  if (real.statusCode !== status) {
    return [`status ${real.statusCode}, expected ${status}${real.body ? ` (body: ${excerpt(real.body)})` : ''}`];
  }
  const mediaType = expected.mediaType ? expected.mediaType.toLowerCase() : undefined;
  if (!mediaType) return real.body ? [`a body was sent where the document describes none (${excerpt(real.body)})`] : [];
  const problems: string[] = [];
  const contentType = header(real.headers, 'content-type');
  if (contentType === undefined) {
    problems.push(`no Content-Type header, expected ${mediaType}`);
  } else if (mediaTypeOf(contentType) !== mediaType) {
    problems.push(`Content-Type is ${contentType}, expected ${mediaType}`);
  }
  if (!isJsonType(mediaType)) {
    if (!real.body) problems.push(`the body is empty, expected ${mediaType} content`);
    return problems;
  }
  if (!real.body) {
    problems.push(`the body is empty, expected ${mediaType}`);
    return problems;
  }
  if (real.bodyEncoding === 'base64') {
    problems.push('the body is not valid UTF-8');
    return problems;
  }
  let body: unknown;
  try {
    body = JSON.parse(real.body);
  } catch (error) {
    problems.push(`the body is not JSON (${error instanceof Error ? error.message : String(error)}): ${excerpt(real.body)}`);
    return problems;
  }
  const errors = contract.at(expected.path, expected.method)?.checkResponse(status, body, mediaType).errors ?? [];
  if (errors.length > 0) {
    const shown = errors.slice(0, MAX_ERRORS).map(describeAjvError);
    const more = errors.length > MAX_ERRORS ? ` (and ${errors.length - MAX_ERRORS} more)` : '';
    problems.push(`the body does not match the schema of ${status} ${mediaType}: ${shown.join('; ')}${more}; body: ${excerpt(real.body)}`);
  }
  if (expected.expectCode && expected.codeField && problems.length === 0) {
    const actual = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[expected.codeField] : undefined;
    if (actual !== expected.expectCode) {
      problems.push(
        `${expected.codeField} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected.expectCode)} (the request was built to cause it)`,
      );
    }
  }
  return problems;
}
