/** The four API families of the contract, their root documents and their local ports. */
export const FAMILIES = ['gateway', 'extras', 'web', 'sdk'] as const;
export type Family = (typeof FAMILIES)[number];

export const MOCK_PORTS: Record<Family, number> = { gateway: 4010, extras: 4011, web: 4012, sdk: 4013 };
export const SANDBOX_PORT = 4000;

export function isFamily(value: string): value is Family {
  return (FAMILIES as readonly string[]).includes(value);
}
