/** The API families of the contract: one bundled document each, `generated/openapi/<family>.json`. */
export const FAMILIES = ['gateway', 'extras', 'web', 'sdk'] as const;

export type Family = (typeof FAMILIES)[number];

export function isFamily(value: unknown): value is Family {
  return typeof value === 'string' && (FAMILIES as readonly string[]).includes(value);
}
