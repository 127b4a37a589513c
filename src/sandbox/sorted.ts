/**
 * Binary search over an ascending array of numbers, for the sandbox's append-only indexes (the
 * deliveries in creation order, a merchant's transactions). Hand-written: a dozen lines, where a
 * dependency would bring a general comparator API for one numeric case.
 */

/** The first index whose value is greater than `value` (the array is ascending). */
export function upperBound(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}
