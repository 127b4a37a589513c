/**
 * Finding 6: the CLI reading an endless input (/dev/zero) as a key file, a body file or standard
 * input. Each command must stop by itself, non-zero, within 5 s, under 200 MB, with a message
 * that names the size limit (a size with its unit, such as `64 KiB` or `1 MiB`).
 */
import { openSync, closeSync } from 'node:fs';
import { runCommand, type CommandResult } from './processes.js';
import { BOUNDS } from './settings.js';
import type { Attack } from './context.js';
import type { Check } from './verdict.js';

/** A size with its unit, as a message naming a limit says it. */
const SIZE = /\b[0-9][0-9,.]*\s?(?:bytes|[kKMG]i?B)\b/;

const CLI_READS: readonly { label: string; args: string[]; stdin?: 'zero'; env?: NodeJS.ProcessEnv }[] = [
  { label: 'trigger sdk.success --key-file /dev/zero', args: ['trigger', 'sdk.success', '--key-file', '/dev/zero', '--sandbox', 'http://127.0.0.1:9'] },
  { label: 'sign sdk --key-file /dev/zero package.json', args: ['sign', 'sdk', '--key-file', '/dev/zero', 'package.json'] },
  { label: 'sign sdk /dev/zero', args: ['sign', 'sdk', '/dev/zero'], env: { PAYLATER_PRIVATE_KEY: 'test_private_key' } },
  { label: 'sign sdk < /dev/zero', args: ['sign', 'sdk', '-'], stdin: 'zero', env: { PAYLATER_PRIVATE_KEY: 'test_private_key' } },
];

/** What is wrong with how a command ended, or undefined when it held. */
export function commandProblem(result: Pick<CommandResult, 'code' | 'ms' | 'peakMb' | 'killedFor' | 'stderr'>, limits: { ms: number; rssMb: number }): string | undefined {
  if (result.killedFor === 'memory') return `still reading at ${Math.round(result.peakMb)} MB of RSS (killed)`;
  if (result.killedFor === 'time') return `still running after ${Math.round(result.ms / 1000)} s (killed), ${Math.round(result.peakMb)} MB`;
  if (result.code === 0) return 'exited 0';
  if (result.ms >= limits.ms) return `took ${Math.round(result.ms)} ms`;
  if (result.peakMb >= limits.rssMb) return `peak RSS ${Math.round(result.peakMb)} MB`;
  if (!SIZE.test(result.stderr)) return `no size limit named: "${result.stderr.trim().split('\n')[0]?.slice(0, 100) ?? ''}"`;
  return undefined;
}

export const cliReadsAttack: Attack = {
  finding: '6',
  name: 'cli-reads',
  title: 'paylater trigger/sign reading /dev/zero as key file, body file and standard input',
  deadlineSeconds: 60,
  async run(ctx) {
    const limits = BOUNDS['cli-reads'];
    const checks: Check[] = [];
    const times: string[] = [];
    for (const command of CLI_READS) {
      const stdin = command.stdin === 'zero' ? openSync('/dev/zero', 'r') : undefined;
      let result: CommandResult;
      try {
        result = await runCommand(command.args, {
          stdin: stdin ?? 'ignore',
          env: command.env,
          timeoutMs: limits.ms + 1_000,
          killAboveMb: 3 * limits.rssMb,
        });
      } finally {
        if (stdin !== undefined) closeSync(stdin);
      }
      ctx.recordPeak(result.peakMb);
      const problem = commandProblem(result, limits);
      checks.push({ ok: problem === undefined, reason: `paylater ${command.label}: ${problem}` });
      times.push(`${Math.round(result.ms)} ms`);
    }
    return { checks, note: `${CLI_READS.length} commands refused in ${times.join(', ')}` };
  },
};
