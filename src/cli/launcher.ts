/**
 * Stopping with the npm process that started us.
 *
 * `npm start` / `npm run x` runs its script through a shell (`sh -c "..."`). On SIGINT or SIGTERM
 * npm passes the signal to that shell only, and the shell (dash, bash) dies without passing it on:
 * the server the script started keeps running, orphaned. So a long-running command started through
 * npm (or npx) watches the chain of processes between itself and npm, and stops as soon as one of
 * them has ended. Linux only (it reads /proc); elsewhere, and when no npm is in the chain, it does
 * nothing. Hand-written because it is twenty lines of /proc reading that no maintained library does.
 */
import { readFileSync } from 'node:fs';

export interface LauncherWatch {
  /** The pid of the npm or npx process found, or undefined when none started this process. */
  readonly npmPid: number | undefined;
  /** Stops watching. */
  stop(): void;
}

/**
 * Calls `onEnded` once (with the pid that ended) when npm or a process between it and this one has
 * ended. Checks every `intervalMs` (default 500) with an unreferenced timer: it never keeps the
 * process alive.
 */
export function watchLauncher(onEnded: (pid: number) => void, intervalMs = 500): LauncherWatch {
  const self = procStat('self');
  if (self === undefined) return { npmPid: undefined, stop: () => undefined };
  const chain: { pid: number; startTime: string }[] = [];
  let npmPid: number | undefined;
  for (let pid = self.ppid; pid > 1 && chain.length < 20; ) {
    const stat = procStat(String(pid));
    if (stat === undefined) break;
    chain.push({ pid, startTime: stat.startTime });
    if (isNpm(pid)) {
      npmPid = pid;
      break;
    }
    pid = stat.ppid;
  }
  if (npmPid === undefined) return { npmPid: undefined, stop: () => undefined };
  const timer = setInterval(() => {
    // A pid that is gone, or reused by another process (another start time), has ended.
    const ended = chain.find((link) => procStat(String(link.pid))?.startTime !== link.startTime);
    if (ended === undefined) return;
    clearInterval(timer);
    onEnded(ended.pid);
  }, intervalMs);
  timer.unref();
  return { npmPid, stop: () => clearInterval(timer) };
}

function isNpm(pid: number): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    return /(^|[\s/])(npm|npx)(\s|$)|npm-cli\.js|npx-cli\.js/.test(command);
  } catch {
    return false;
  }
}

/** The parent and start time of a process, from /proc (Linux); undefined elsewhere or when gone. */
function procStat(pid: string): { ppid: number; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may contain anything.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    const startTime = fields[19];
    if (!Number.isInteger(ppid) || startTime === undefined) return undefined;
    // A zombie has ended: its parent has not reaped it yet.
    if (fields[0] === 'Z') return undefined;
    return { ppid, startTime };
  } catch {
    return undefined;
  }
}
