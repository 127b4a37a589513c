/**
 * How far the sandbox process lets its heap grow before the garbage collector runs (D63).
 *
 * V8 sets the next collection's limit at a multiple of the memory still in use after the last one,
 * up to four times it when collections are cheap; a sandbox under a gateway's load test keeps about
 * 200 MB in use at its retention limits, and with V8's own choice ended such a test at 565 MB of
 * resident memory. `paylater sandbox` asks V8 for a fixed factor instead (`--heap-growing-percent`),
 * which keeps the resident memory near half of that for a little more collector time. A process
 * started with its own `--heap-growing-percent` keeps it. Only the command does this: a sandbox
 * created in-process (`createSandbox`) leaves its host's collector alone.
 *
 * `v8.setFlagsFromString` after start-up is documented as unpredictable in general; this flag is a
 * number V8 reads each time it computes the next limit, so it takes effect from the next collection.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap may grow to (1 + this / 100) times the memory in use after a collection. */
export const HEAP_GROWING_PERCENT = 100;

/** Sets the sandbox's heap growth unless the process was given its own; says whether it did. */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((argument) => /^--heap[-_]growing[-_]percent\b/.test(argument))) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
