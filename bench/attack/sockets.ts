/**
 * The sockets a process holds open to some ports, as the kernel sees them: the socket inodes in
 * `/proc/<pid>/fd` matched against `/proc/net/tcp` and `/proc/net/tcp6` entries whose remote port
 * is one of them. A receiver in the bench process counts a connection until its event loop sees
 * the `close`, which comes late while that loop serves 1,100 receivers: the receivers saw 326
 * "open" at once where the sandbox held at most its cap. The kernel's view counts a socket from the
 * moment it exists (connecting included) until the sandbox closes its descriptor.
 *
 * {@link startSocketWatch} samples in a worker thread every 20 ms, so that the bench's own busy
 * event loop does not stretch the sampling; a peak shorter than the interval may be missed.
 * The worker is plain JavaScript evaluated from a string: it loads nothing from the repository.
 */
import { Worker } from 'node:worker_threads';

/**
 * The inodes of the sockets whose remote port is one of `ports`, in the text of `/proc/net/tcp`
 * or `/proc/net/tcp6` (a header line, then `sl local rem st tx:rx tr:when retrnsmt uid timeout
 * inode ...`, addresses as `HEX:PORT`). Listening sockets and those without an inode (TIME_WAIT)
 * are left out.
 */
export function socketInodesTo(table: string, ports: ReadonlySet<number>): Set<string> {
  const inodes = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const remotePort = Number.parseInt(fields[2]!.slice(fields[2]!.indexOf(':') + 1), 16);
    if (fields[3] === '0A' || fields[9] === '0' || !ports.has(remotePort)) continue;
    inodes.add(fields[9]!);
  }
  return inodes;
}

/** The socket inodes among the targets of a process's descriptors (`socket:[12345]` -> `12345`). */
export function socketInodesOf(links: readonly string[]): Set<string> {
  const inodes = new Set<string>();
  for (const link of links) {
    const match = /^socket:\[([0-9]+)\]$/.exec(link);
    if (match !== null) inodes.add(match[1]!);
  }
  return inodes;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readdirSync, readlinkSync, readFileSync } = require('node:fs');
const { pid, ports, intervalMs } = workerData;
const wanted = new Set(ports);
// The functions below are the module's own, as compiled (a compiler may wrap them in __name).
const __name = (fn) => fn;
${socketInodesTo.toString()}
${socketInodesOf.toString()}
let peak = 0, samples = 0, stopped = false;
function links() {
  const out = [];
  let names = [];
  try { names = readdirSync('/proc/' + pid + '/fd'); } catch { return out; }
  for (const name of names) {
    try { out.push(readlinkSync('/proc/' + pid + '/fd/' + name)); } catch {}
  }
  return out;
}
function table(file) {
  try { return readFileSync(file, 'utf8'); } catch { return ''; }
}
function sample() {
  if (stopped) return;
  const own = socketInodesOf(links());
  let open = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const inode of socketInodesTo(table(file), wanted)) if (own.has(inode)) open++;
  }
  samples++;
  if (open > peak) peak = open;
  setTimeout(sample, intervalMs);
}
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  parentPort.postMessage({ peak, samples });
});
sample();
`;

export interface SocketWatch {
  /** Stops sampling; the most sockets seen open at once and how many samples were taken. */
  stop(): Promise<{ peak: number; samples: number }>;
}

/** Samples the sockets process `pid` holds open to `ports` every `intervalMs`. */
export function startSocketWatch(pid: number, ports: readonly number[], intervalMs = 20): SocketWatch {
  const worker = new Worker(WORKER, { eval: true, workerData: { pid, ports, intervalMs } });
  let result: Promise<{ peak: number; samples: number }> | undefined;
  return {
    stop() {
      result ??= new Promise((resolve) => {
        const timer = setTimeout(() => {
          void worker.terminate();
          resolve({ peak: Number.NaN, samples: 0 });
        }, 5_000);
        worker.once('message', (figures: { peak: number; samples: number }) => {
          clearTimeout(timer);
          void worker.terminate();
          resolve(figures);
        });
        worker.postMessage('stop');
      });
      return result;
    },
  };
}
