/** The API families of the contract (one list, src/contract/families.ts) and their local ports. */
import type { Family } from '../src/contract/families.js';

export { FAMILIES, isFamily, type Family } from '../src/contract/families.js';

export const MOCK_PORTS: Record<Family, number> = { gateway: 4010, extras: 4011, web: 4012, sdk: 4013 };
export const SANDBOX_PORT = 4000;
