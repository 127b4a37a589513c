/**
 * The one place that says how each attack starts its sandbox and what it must stay under.
 *
 * `flags` are passed as they are: flags the sandbox accepts today. `ifAccepted` lists flags (a
 * flag and its value, if any) passed only when `paylater sandbox --help` names the flag, so that a
 * hardening option (a socket cap, a connection limit, ...) can be listed here before the sandbox
 * has it, and an older sandbox still starts. `npm run bench -- --only attack --sandbox-flags="..."`
 * adds flags to every sandbox the same way (each one only when the help names it).
 */
export const ATTACK_NAMES = [
  'notes',
  'extras',
  'webhook-pool',
  'tokens',
  'first-page',
  'cli-reads',
  'ssrf',
  'host-headers',
  'slow-connections',
  'slow-streams',
  'isolation',
] as const;
export type AttackName = (typeof ATTACK_NAMES)[number];

export interface SandboxFlags {
  flags: readonly string[];
  ifAccepted: readonly (readonly string[])[];
}

export const SANDBOX_FLAGS: Readonly<Record<AttackName, SandboxFlags>> = {
  notes: { flags: ['--quiet', '--allow-any-webhook-target'], ifAccepted: [] },
  extras: { flags: ['--quiet'], ifAccepted: [] },
  // The receivers are on 127.0.0.1, which a sandbox may refuse by default.
  'webhook-pool': { flags: ['--quiet', '--allow-any-webhook-target'], ifAccepted: [] },
  // Not --quiet: the request lines are among what is searched for the secrets. The webhook URL
  // (with the receiver's port) is added by the attack.
  tokens: { flags: ['--allow-any-webhook-target'], ifAccepted: [] },
  'first-page': { flags: ['--quiet', '--retain-deliveries', '1000'], ifAccepted: [] },
  // The CLI commands start no sandbox.
  'cli-reads': { flags: [], ifAccepted: [] },
  // Never --allow-any-webhook-target: the attack checks the default refusals.
  ssrf: { flags: ['--quiet'], ifAccepted: [] },
  'host-headers': { flags: ['--quiet'], ifAccepted: [] },
  'slow-connections': { flags: ['--quiet'], ifAccepted: [] },
  'slow-streams': { flags: ['--quiet'], ifAccepted: [] },
  // Hosted with a known operator token (the attack sets PAYLATER_OPERATOR_TOKEN).
  isolation: { flags: ['--quiet'], ifAccepted: [] },
};

/**
 * The stall budget: no request within the documented limits holds the sandbox's event loop longer
 * than this, in any attack that starts a sandbox (the stall probe runs in every one).
 */
export const STALL_BUDGET_MS = 50;

/** The bounds of the held behaviour (MB of RSS, ms), as the findings state them; stalls: {@link STALL_BUDGET_MS}. */
export const BOUNDS = {
  notes: { rssMb: 1024 },
  extras: { rssMb: 1024, readMs: 1000 },
  'cli-reads': { rssMb: 200, ms: 5000 },
  'slow-connections': { rssMb: 300 },
  'slow-streams': { rssMb: 500 },
} as const satisfies Partial<Record<AttackName, { rssMb?: number; [other: string]: number | undefined }>>;

/** A sandbox whose RSS passes this many MB is killed by the suite (the machine is shared). */
export const KILL_ABOVE_MB = 2048;

/** The flags of `wanted` (words, a flag followed by its value if any) that `help` names. */
export function acceptedFlags(wanted: readonly (readonly string[])[], help: string): { passed: string[]; ignored: string[] } {
  const passed: string[] = [];
  const ignored: string[] = [];
  for (const group of wanted) {
    const flag = group[0];
    if (flag === undefined) continue;
    const named = new RegExp(`(^|[\\s,\\[])${flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[\\s=,\\]]|$)`, 'm').test(help);
    if (named) passed.push(...group);
    else ignored.push(flag);
  }
  return { passed, ignored };
}

/** `--a 1 --b --c=2` as flag groups: `[['--a', '1'], ['--b'], ['--c=2']]`. */
export function flagGroups(text: string): string[][] {
  const groups: string[][] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (word.startsWith('--') || groups.length === 0) groups.push([word]);
    else groups[groups.length - 1]!.push(word);
  }
  return groups;
}
