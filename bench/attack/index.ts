/**
 * `npm run bench -- --only attack [--attack NAME,...] [--sandbox-flags="..."]
 * [--sandbox-node-options="--cpu-prof ..."]`: a regression check
 * that replays known attacks, each against a freshly started sandbox (the built CLI on 127.0.0.1
 * and a free port), and prints one table: per attack the peak RSS of the process attacked (VmHWM
 * from /proc), the longest stall a probe saw (probe.ts) and whether the fixed behaviour `held`, or
 * `FAILED` with a one-line reason. Every loop is bounded in count and time, every attack has a
 * deadline, and every child process is killed on any exit. The whole run takes a few minutes.
 *
 * The attacks, their sizes and what "held" means are in the modules named below; the sandbox
 * flags of each and the bounds are in settings.ts.
 */
import { extrasAttack, notesAttack } from './amplify.js';
import { cliReadsAttack } from './cli-reads.js';
import { runAttack, type Attack } from './context.js';
import { firstPageAttack, ssrfAttack, webhookPoolAttack } from './deliveries.js';
import { sandboxHelp } from './processes.js';
import { ATTACK_NAMES, flagGroups, type AttackName } from './settings.js';
import { isolationAttack } from './isolation.js';
import { tokensAttack } from './tokens.js';
import { hostHeadersAttack, slowConnectionsAttack, slowStreamsAttack } from './transport.js';
import { formatTable, type AttackRow } from './verdict.js';
import { build } from '../soak.js';

export { ATTACK_NAMES, type AttackName } from './settings.js';

export interface AttackOptions {
  /** Default: every attack. */
  names?: readonly AttackName[];
  /** Flags for every sandbox, as typed (`--a 1 --b`); each is passed only when `--help` names it. */
  sandboxFlags?: string;
  /** Node options for every sandbox process (`--cpu-prof --cpu-prof-dir=prof`), before the script. */
  sandboxNodeOptions?: readonly string[];
  log?: (line: string) => void;
}

export interface AttackReport {
  rows: AttackRow[];
  table: string;
  failed: number;
}

function attacks(help: string): Attack[] {
  return [
    notesAttack,
    extrasAttack,
    webhookPoolAttack(help),
    tokensAttack,
    firstPageAttack,
    cliReadsAttack,
    ssrfAttack,
    hostHeadersAttack,
    slowConnectionsAttack,
    slowStreamsAttack,
    isolationAttack,
  ];
}

export async function benchAttack(options: AttackOptions = {}): Promise<AttackReport> {
  const log = options.log ?? (() => undefined);
  const names = options.names ?? ATTACK_NAMES;
  await build();
  const help = await sandboxHelp();
  const extraFlags = flagGroups(options.sandboxFlags ?? '');
  const rows: AttackRow[] = [];
  for (const attack of attacks(help).filter((candidate) => names.includes(candidate.name))) {
    log(`  ${attack.finding} ${attack.name}: ${attack.title}`);
    const row = await runAttack(attack, { help, extraFlags, nodeOptions: options.sandboxNodeOptions ?? [], log });
    log(`    ${row.outcome} in ${row.seconds.toFixed(0)} s${row.reason === '' ? '' : `: ${row.reason}`}`);
    rows.push(row);
  }
  return { rows, table: formatTable(rows), failed: rows.filter((row) => row.outcome === 'FAILED').length };
}
