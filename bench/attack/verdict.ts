/**
 * The attack suite's pure logic: reading a process's memory from `/proc/<pid>/status`, the verdict
 * of one scenario from its checks, and the table the suite prints. Kept apart from the scenarios
 * (which need a sandbox process) so that test/bench/attack-verdict.test.ts can check it.
 */

/** What `/proc/<pid>/status` says of a process's resident memory, in kB (absent fields: undefined). */
export interface ProcMemory {
  /** VmHWM: the peak resident set size since the process started ("high water mark"). */
  hwmKb: number | undefined;
  /** VmRSS: the resident set size now. */
  rssKb: number | undefined;
}

/** Reads VmHWM and VmRSS from the text of `/proc/<pid>/status` (Linux; the values are in kB). */
export function parseProcStatus(text: string): ProcMemory {
  const field = (name: string): number | undefined => {
    const match = new RegExp(`^${name}:\\s+([0-9]+) kB$`, 'm').exec(text);
    return match === null ? undefined : Number(match[1]);
  };
  return { hwmKb: field('VmHWM'), rssKb: field('VmRSS') };
}

/** One thing a scenario checks: `ok`, or not with a one-line reason (what went wrong, with figures). */
export interface Check {
  ok: boolean;
  /** Said when the check fails. */
  reason: string;
}

export type Outcome = 'held' | 'FAILED';

/**
 * The outcome of a scenario: `held` when every check holds (the reason is then `note`), else
 * `FAILED` with the reasons of the first two checks that failed, and how many others failed too.
 */
export function verdict(checks: readonly Check[], note = ''): { outcome: Outcome; reason: string } {
  const failed = checks.filter((check) => !check.ok);
  if (failed.length === 0) return { outcome: 'held', reason: note };
  const shown = failed.slice(0, 2).map((check) => check.reason);
  const rest = failed.length - shown.length;
  const more = rest > 0 ? ` (+${rest} more failed check${rest > 1 ? 's' : ''})` : '';
  return { outcome: 'FAILED', reason: `${shown.join('; ')}${more}` };
}

/** A check that a measured figure stays under its bound (an unmeasured figure passes). */
export function under(what: string, value: number | undefined, bound: number, unit: string): Check {
  const shown = value === undefined ? '' : `${Math.round(value)} ${unit}`;
  return { ok: value === undefined || value < bound, reason: `${what} ${shown} over the bound of ${bound} ${unit}` };
}

/** One row of the table. */
export interface AttackRow {
  finding: string;
  name: string;
  /** Peak RSS of the process attacked (the sandbox, or the CLI), MB; undefined: not measured. */
  peakRssMb: number | undefined;
  /** The longest answer of the stall probe, ms; undefined: no probe in this scenario. */
  stallMs: number | undefined;
  outcome: Outcome;
  reason: string;
  seconds: number;
}

/** The table the suite prints: one line per scenario, the reason last (it may be long). */
export function formatTable(rows: readonly AttackRow[]): string {
  const header = ['#', 'attack', 'peak RSS', 'longest stall', 'time', 'outcome', 'reason'];
  const cells = rows.map((row) => [
    row.finding,
    row.name,
    row.peakRssMb === undefined ? '-' : `${Math.round(row.peakRssMb)} MB`,
    row.stallMs === undefined ? '-' : `${Math.round(row.stallMs)} ms`,
    `${Math.round(row.seconds)} s`,
    row.outcome,
    row.reason,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column]!.length)));
  const numeric = new Set([2, 3, 4]);
  const line = (values: string[]) =>
    values
      .map((value, column) => (column === values.length - 1 ? value : numeric.has(column) ? value.padStart(widths[column]!) : value.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width, column) => (column === header.length - 1 ? '-'.repeat(6) : '-'.repeat(width)))), ...cells.map(line)].join('\n');
}
