/**
 * Compaction of the sandbox process's heap when, and only when, its old generation is fragmented.
 *
 * A compacting full collection moves every live object of the pages it compacts, in one pause of
 * the event loop. V8's `--compact-on-every-full-gc` compacts every page at every full collection:
 * the pages stay close to what is in use over a long soak (D65), but every full collection then
 * copies the whole live heap, 40 to 110 ms of a 60 to 170 ms pause for the 13 to 40 MB heap of a
 * sandbox under the `notes` attack (`--trace-gc-nvp`, `evacuate`), against 6 to 30 ms pauses
 * without the flag; more on a larger heap.
 *
 * So the flag is set only while it is needed: after each full collection (a `gc` performance entry
 * of the major kind) the old generation's pages (`space_size`) are compared with what they hold
 * (`space_used_size`); when the pages hold more than {@link SLACK_FLOOR_BYTES} of free room beyond
 * what is in use, the flag is turned on, so the next full
 * collection compacts; it is turned off after a full collection that leaves the pages close to what
 * is in use. Most full collections then compact nothing, and the few that do are the ones that give
 * memory back.
 *
 * Never above {@link MAX_COMPACTED_BYTES} in use: the copy is of what is live, in one pause, about
 * 2 to 8 ms per MB under the shared machine's usual load (`--trace-gc-nvp`, `evacuate`: 485 ms for
 * 81 MB, 1,036 ms for 122 MB in the attack suite's `first-page`), so a sandbox holding 100,000 records
 * and more paid 0.3 to 1 s at once to give pages back. Above it the old generation is left to V8's own
 * compaction (a few MB of its emptiest pages at a collection), and its size to the retention limits.
 *
 * V8 has no API to ask for one compacting collection (a "memory pressure" notification is not
 * reachable from JavaScript, and `gc()` needs `--expose-gc` and runs a whole atomic collection at
 * once), so the flag is turned on and off with `v8.setFlagsFromString`, which V8 reads when a full
 * collection starts marking: Node keeps its flags writable after start-up for that call. A process
 * started with the flag, or with `--no-compact-on-every-full-gc`, keeps the user's choice: nothing is
 * watched. A sandbox created in-process (`createSandbox`) leaves its host's collector alone.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { given } from './heap.js';

/** The V8 flag turned on while the old generation is fragmented. */
const FLAG = 'compact-on-every-full-gc';

/** Free room in the old generation's pages beyond what they hold, above which they are compacted. */
const SLACK_FLOOR_BYTES = 16 * 1024 * 1024;

/** The old generation's figures that decide (from `v8.getHeapSpaceStatistics()`). */
export interface SpaceFigures {
  space_size: number;
  space_used_size: number;
}

/**
 * Above this much in use the old generation is never compacted by the watch: copying it would hold
 * the event loop past the stall budget (50 ms) at the rate measured (see the module's header).
 */
const MAX_COMPACTED_BYTES = 16 * 1024 * 1024;

/**
 * Whether pages of `space_size` bytes holding `space_used_size` are worth compacting: sparse, and
 * small enough to be copied in one short pause.
 */
export function fragmented({ space_size, space_used_size }: SpaceFigures): boolean {
  const slack = space_size - space_used_size;
  return space_used_size <= MAX_COMPACTED_BYTES && slack > SLACK_FLOOR_BYTES;
}

/** What a watch did: full collections seen, and how many times the flag was turned on. */
export interface CompactionWatch {
  readonly majors: number;
  readonly armed: number;
  stop(): void;
}

/**
 * Watches the process's full collections and turns the compaction flag on and off (see the
 * module's header); `undefined` when `execArgv` gives the flag either way (the user's choice).
 */
export function compactWhenFragmented(execArgv: readonly string[] = process.execArgv): CompactionWatch | undefined {
  if (given(execArgv, FLAG)) return undefined;
  let on = false;
  let majors = 0;
  let armed = 0;
  const observer = new PerformanceObserver((list) => {
    const major = list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major) return;
    majors++;
    const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
    const wanted = old !== undefined && fragmented(old);
    if (wanted === on) return;
    on = wanted;
    if (on) armed++;
    setFlagsFromString(on ? `--${FLAG}` : `--no-${FLAG}`);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    get majors() {
      return majors;
    },
    get armed() {
      return armed;
    },
    stop() {
      observer.disconnect();
      if (on) setFlagsFromString(`--no-${FLAG}`);
      on = false;
    },
  };
}
