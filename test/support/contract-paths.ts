/**
 * Which contract operation a concrete request is, for the tests that check answers against the
 * contract. find-my-way, as the sandbox's router: a literal segment wins over a template. Unlike the
 * router, it knows every operation of the document and matches any length, so that a check can
 * name the operation of a path the router refused or the sandbox does not serve.
 */
import FindMyWay from 'find-my-way';
import { HTTP_METHODS } from '../../src/contract/index.js';
import type { Contract, ContractOperation } from '../../src/sandbox/validation.js';

const routers = new WeakMap<Contract, ReturnType<typeof FindMyWay>>();

function routerOf(contract: Contract): ReturnType<typeof FindMyWay> {
  let router = routers.get(contract);
  if (router === undefined) {
    router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: Number.MAX_SAFE_INTEGER });
    for (const operation of contract.operations.values()) {
      if (operation.webhook) continue;
      router.on(operation.method as FindMyWay.HTTPMethod, operation.path.replace(/\{([^}]+)\}/g, ':$1'), () => undefined, operation);
    }
    routers.set(contract, router);
  }
  return router;
}

/** The operation of `paths` whose template matches this method and concrete path, if any. */
export function matchOperation(
  contract: Contract,
  method: string,
  pathname: string,
): { operation: ContractOperation; params: Record<string, string> } | undefined {
  if (!(HTTP_METHODS as readonly string[]).includes(method.toLowerCase())) return undefined;
  const found = routerOf(contract).find(method.toUpperCase() as FindMyWay.HTTPMethod, literalPercents(pathname));
  if (found === null) return undefined;
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(found.params)) {
    // A template segment stands for a value: an empty one (`/api/merchant//document`) matches nothing.
    if (value === undefined || value === '') return undefined;
    params[name] = value;
  }
  return { operation: found.store as ContractOperation, params };
}

/**
 * A segment that is not valid percent-encoding (`%zz`, `%E0%A4`) is matched as the text it is:
 * its `%` become `%25`, which find-my-way decodes back (it would match nothing otherwise).
 */
function literalPercents(pathname: string): string {
  if (!pathname.includes('%')) return pathname;
  return pathname
    .split('/')
    .map((segment) => {
      try {
        decodeURIComponent(segment);
        return segment;
      } catch {
        return segment.replace(/%/g, '%25');
      }
    })
    .join('/');
}
