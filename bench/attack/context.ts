/**
 * What an attack gets to work with, and what the runner measures for it: every sandbox it starts
 * (with the flags of settings.ts) has its memory watched and is stopped at the end, the stall probe
 * runs against the sandbox it names, receivers and other resources are closed at the end, and a
 * deadline aborts it. The runner then adds the checks every attack shares (the sandbox alive, RSS
 * and stall under the attack's bounds) to the attack's own.
 */
import { startProbe, type Probe } from './probe.js';
import { SandboxStartFailure, startSandboxProcess, type SandboxProcess } from './processes.js';
import { startReceiver, type Receiver, type ReceiverOptions } from './http.js';
import { acceptedFlags, BOUNDS, KILL_ABOVE_MB, SANDBOX_FLAGS, STALL_BUDGET_MS, type AttackName } from './settings.js';
import { under, verdict, type AttackRow, type Check } from './verdict.js';

interface AttackContext {
  readonly name: AttackName;
  log(line: string): void;
  /** Aborted at the attack's deadline: loops stop. */
  readonly signal: AbortSignal;
  /**
   * Starts a sandbox with the attack's flags and `extra`. `expectExit`: the attack expects it may
   * refuse to start or end (its end is then not a failure). `probePath`: what the stall probe
   * asks (a hosted sandbox's clock needs the operator token in its query).
   */
  sandbox(extra?: readonly string[], options?: { expectExit?: boolean; probePath?: string }): Promise<SandboxProcess>;
  /** Starts the stall probe against `sandbox` (once per attack); resolves once it warmed up and records. */
  probe(sandbox: SandboxProcess): Promise<void>;
  receiver(options?: ReceiverOptions): Promise<Receiver>;
  /** Something to undo at the end (last deferred, first run). */
  defer(undo: () => unknown): void;
  /** The peak RSS of a process other than a sandbox that the attack ran (the CLI), MB. */
  recordPeak(mb: number): void;
}

interface AttackResult {
  checks: Check[];
  /** Said when the attack held: what was done and seen. */
  note: string;
}

export interface Attack {
  finding: string;
  name: AttackName;
  title: string;
  /** Whole seconds the attack may take before it is stopped and failed. */
  deadlineSeconds: number;
  run(ctx: AttackContext): Promise<AttackResult>;
}

export interface RunOptions {
  help: string;
  /** Flag groups from the command line, passed to every sandbox the help names them in. */
  extraFlags: readonly (readonly string[])[];
  /** Node options for every sandbox process (a profile: `--cpu-prof --cpu-prof-dir=DIR`). */
  nodeOptions: readonly string[];
  log: (line: string) => void;
}

export async function runAttack(attack: Attack, options: RunOptions): Promise<AttackRow> {
  const started = performance.now();
  const controller = new AbortController();
  const sandboxes: { process: SandboxProcess; expectExit: boolean }[] = [];
  const undo: (() => unknown)[] = [];
  const peaks: number[] = [];
  let probe: Probe | undefined;
  const settings = SANDBOX_FLAGS[attack.name];
  const optional = acceptedFlags([...settings.ifAccepted, ...options.extraFlags], options.help);
  if (optional.ignored.length > 0) options.log(`  (${attack.name}: not passed, this sandbox does not accept: ${optional.ignored.join(' ')})`);

  const ctx: AttackContext = {
    name: attack.name,
    log: options.log,
    signal: controller.signal,
    async sandbox(extra = [], { expectExit = false, probePath }: { expectExit?: boolean; probePath?: string } = {}) {
      const process = await startSandboxProcess([...settings.flags, ...optional.passed, ...extra], KILL_ABOVE_MB, options.nodeOptions);
      sandboxes.push({ process, expectExit });
      // Every attack's first sandbox gets the stall probe, so every case is held to the stall budget.
      if (probe === undefined && !expectExit) {
        probe = startProbe(process.url, process.child.pid ?? 0, probePath);
        await probe.ready;
      }
      return process;
    },
    async probe(sandbox) {
      probe ??= startProbe(sandbox.url, sandbox.child.pid ?? 0);
      await probe.ready;
    },
    async receiver(receiverOptions) {
      const receiver = await startReceiver(receiverOptions);
      undo.push(() => receiver.close());
      return receiver;
    },
    defer(fn) {
      undo.push(fn);
    },
    recordPeak(mb) {
      peaks.push(mb);
    },
  };

  let result: AttackResult;
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<AttackResult>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve({ checks: [{ ok: false, reason: `did not finish within ${attack.deadlineSeconds} s` }], note: '' });
      }, attack.deadlineSeconds * 1000);
    });
    const running = attack.run(ctx);
    running.catch(() => undefined);
    result = await Promise.race([running, deadline]);
  } catch (error) {
    const reason =
      error instanceof SandboxStartFailure
        ? `${error.message}: ${lastLine(error.output)}`
        : `the attack stopped: ${error instanceof Error ? error.message : String(error)}`;
    result = { checks: [{ ok: false, reason }], note: '' };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }

  // Shared checks, measured before anything is stopped.
  const figures = probe === undefined ? undefined : await probe.stop();
  const deaths: Check[] = [];
  const limits: Check[] = [];
  for (const { process, expectExit } of sandboxes) {
    process.memory.stop();
    if (process.memory.killedAtMb !== undefined) {
      deaths.push({ ok: false, reason: `sandbox RSS reached ${Math.round(process.memory.killedAtMb)} MB (killed by the suite above ${KILL_ABOVE_MB} MB)` });
    } else if (!expectExit && !process.alive() && !process.stopped()) {
      deaths.push({ ok: false, reason: `the sandbox died (${process.ended()}): ${lastLine(process.output())}` });
    }
  }
  const peakMb = Math.max(0, ...sandboxes.map(({ process }) => process.memory.peakMb), ...peaks);
  const bounds: { rssMb?: number } = (BOUNDS as Partial<Record<AttackName, { rssMb?: number }>>)[attack.name] ?? {};
  if (bounds.rssMb !== undefined) limits.push(under('peak RSS', peakMb, bounds.rssMb, 'MB'));
  if (figures !== undefined) {
    const stall = under('longest stall', figures.worstMs, STALL_BUDGET_MS, 'ms');
    const wall = `waited ${Math.round(figures.worstWallMs)} ms, ${(figures.worstAtMs / 1000).toFixed(1)} s into the attack; longest wait ${Math.round(figures.longestWaitMs)} ms`;
    limits.push({ ...stall, reason: `${stall.reason} (${wall})` });
  }

  for (const fn of undo.reverse()) {
    try {
      await fn();
    } catch {
      // Already closed.
    }
  }
  await Promise.all(sandboxes.map(({ process }) => process.stop()));

  // The sandbox's death first, then the attack's own checks, then the bounds.
  const { outcome, reason } = verdict([...deaths, ...result.checks, ...limits], result.note);
  return {
    finding: attack.finding,
    name: attack.name,
    peakRssMb: sandboxes.length === 0 && peaks.length === 0 ? undefined : peakMb,
    stallMs: figures?.worstMs,
    outcome,
    reason,
    seconds: (performance.now() - started) / 1000,
  };
}

/** The last non-empty line of some output, shortened: for a reason. */
export function lastLine(output: string): string {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
  const line = lines.at(-1) ?? '(no output)';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}
