/**
 * Copies of the records the families keep, written so that none can lose a field.
 *
 * The direct flows copy a transaction field by field (a literal of fixed keys keeps V8's
 * object shapes stable over a million records, where a spread of a frozen record does not). A copy
 * written that way compiles even when a line is missing, and the field then reads `undefined`
 * after the next transition. A copy typed {@link EveryField} must name every key of the record,
 * optional ones included, so leaving one out is a type error; test/sandbox/records.test.ts also
 * checks each copy at run time against the record type's own list of keys, read with the
 * TypeScript compiler.
 */

/**
 * `T` with every key present: an optional one may hold `undefined`, but it must be named. (Mapped
 * over `Required<T>`, so every key is required, while `T[K]` of an optional key keeps `undefined`.)
 */
export type EveryField<T> = { [K in keyof Required<T>]: T[K] };
