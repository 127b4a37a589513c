/**
 * Which requests are safe to repeat, from the contract: each operation's `x-retry-safe`,
 * generated into `generated/operations/<family>.js`. A request is matched to its operation by
 * method and path (below the client's base URL); one with no operation is never repeated.
 */
import type { OperationInfo } from '../../generated/operations/gateway.js';
import type { SafeToRepeat } from './transport.js';

interface CompiledOperation {
  method: string;
  pattern: RegExp;
  retrySafe: OperationInfo['retrySafe'];
}

/** The retry decision of a family's operations, for a client whose base URL is `baseUrl`. */
export function retrySafety(operations: readonly OperationInfo[], baseUrl: string): SafeToRepeat {
  // Literal paths before templates: `/api/merchant/transaction` is not `/api/merchant/{id}`.
  const compiled: CompiledOperation[] = [...operations]
    .sort((a, b) => parameterCount(a.path) - parameterCount(b.path))
    .map((operation) => ({ method: operation.method, pattern: templatePattern(operation.path), retrySafe: operation.retrySafe }));
  let basePath: string | undefined; // read on first use: the transport checks baseUrl first
  return (request) => {
    basePath ??= new URL(baseUrl).pathname.replace(/\/+$/, '');
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const pathname = new URL(request.url).pathname;
    if (!pathname.startsWith(basePath)) return false;
    const path = pathname.slice(basePath.length);
    const operation = compiled.find((candidate) => candidate.method === method && candidate.pattern.test(path));
    if (operation === undefined || !operation.retrySafe.safe) return false;
    const pointer = operation.retrySafe.ifBodyHas;
    return pointer === undefined || typeof valueAt(request.body, pointer) === 'string';
  };
}

function parameterCount(path: string): number {
  return path.split('{').length - 1;
}

/** `/api/merchant/{id}` as a regular expression of the whole path; a parameter is one segment. */
function templatePattern(path: string): RegExp {
  const parts = path.split(/\{[^}]+\}/).map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

/** The value at a JSON pointer of a JSON body, or `undefined` (no body, not JSON, nothing there). */
function valueAt(body: Uint8Array | undefined, pointer: string): unknown {
  if (body === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body)) as unknown;
  } catch {
    return undefined;
  }
  for (const token of pointer.split('/').slice(1)) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
