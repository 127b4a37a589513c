/** The API families of the contract (one list, src/contract/families.ts) and their local ports. */
import { FAMILIES, familyInfo, type Family } from '../src/contract/families.js';

export { FAMILIES, familyInfo, isFamily, type Family } from '../src/contract/families.js';

/** Each family's mock port (`mockPort` of its row). */
export const MOCK_PORTS = Object.freeze(Object.fromEntries(FAMILIES.map((family) => [family, familyInfo(family).mockPort]))) as Readonly<Record<Family, number>>;
export const SANDBOX_PORT = 4000;
