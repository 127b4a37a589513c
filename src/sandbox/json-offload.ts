/**
 * Large JSON bodies parsed off the event loop. A 1 MiB body of `{"notes":{"a":[{},{},...]}}` is some
 * 350,000 objects once parsed: parsing, measuring and writing its free value (`notes`, pushed
 * `data`) back as text took the sandbox's one thread 300 ms to 1.5 s, in which no other request was
 * answered. Bodies of at least {@link OFFLOAD_BYTES} of the operations that hold a free value are
 * parsed here, in a worker thread, by the rules of every body (src/http/json.ts: strict UTF-8, JSON
 * syntax, the nesting limit), and each free value is measured against the sandbox's limits of
 * values and depth (stored-json.ts) and written as text there. The event loop gets back the rest of
 * the body as text, small, with a stand-in in place of each free value, and the free values' texts:
 * it parses the rest, validates it against the contract as it would the whole body (a stand-in is
 * an empty object or array of the same type, with the members the sandbox reads, `webhook_url`,
 * when they are not objects), and keeps the texts as they are.
 *
 * - One worker per sandbox, started at the first large body, its requests answered in order; it
 *   does not keep the process alive, and it ends with the sandbox.
 * - When the worker cannot answer (it failed, or ran out of its memory), the body is parsed on the
 *   event loop as before: slower, never wrong.
 * - The worker runs json-worker.ts, which imports the rules it applies (src/http/json.ts's parse,
 *   stored-json.ts's measure): one copy of each, whether the sandbox runs built or from source.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerAnswer, WorkerRequest } from './json-worker.js';
import type { MeasuredJson } from './stored-json.js';

/** Bodies of at least this many bytes are parsed in the worker: smaller ones parse in a few ms. */
export const OFFLOAD_BYTES = 64 * 1024;

/** What the worker found: the body parsed, with its free values by JSON pointer, or the problem. */
export type OffloadedBody =
  | { ok: true; value: unknown; free: ReadonlyMap<string, MeasuredJson> }
  | { ok: false; problem: 'utf-8' | 'syntax' | 'depth'; reason?: string };

export interface OffloadLimits {
  /** The nesting limit of every body. */
  maxDepth: number;
  jsonMembers: number;
  jsonDepth: number;
}

/** An array longer than this (the contract's `maxItems` of pushed data) is left in place, so validation refuses it. */
const MAX_STAND_IN_ITEMS = 524_288;

/**
 * The worker's module: json-worker.js beside this one once built. Run from its TypeScript source
 * (the test runner, tsx), this module's URL ends in `.ts`: the worker then registers tsx's loader
 * before it imports json-worker.ts, since Node's own loader reads no TypeScript (and a worker
 * does not inherit the test runner's).
 */
function workerSource(): { source: string | URL; eval: boolean } {
  const fromSource = import.meta.url.endsWith('.ts');
  const module = new URL(fromSource ? './json-worker.ts' : './json-worker.js', import.meta.url);
  if (!fromSource) return { source: module, eval: false };
  const tsx = import.meta.resolve('tsx/esm/api');
  return {
    source: `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); });`,
    eval: true,
  };
}

/** The sandbox's worker for large bodies (see the module's header). */
export class JsonOffload {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (answer: WorkerAnswer | undefined) => void>();

  /**
   * `bytes` parsed and its free values (JSON pointers without escapes, `/notes`,
   * `/transaction/notes`) kept as text; `undefined` when the worker could not answer.
   */
  parse(bytes: Uint8Array, pointers: readonly string[], limits: OffloadLimits): Promise<OffloadedBody | undefined> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<WorkerAnswer | undefined>((resolve) => {
      this.pending.set(id, resolve);
      const request: WorkerRequest = { id, bytes, pointers, ...limits };
      worker.postMessage(request);
    }).then((answer) => {
      if (answer === undefined || answer.problem === 'failed') return undefined;
      if (!answer.ok) return { ok: false, problem: answer.problem as 'utf-8' | 'syntax' | 'depth', ...(answer.reason === undefined ? {} : { reason: answer.reason }) };
      return { ok: true, value: JSON.parse(answer.rest!) as unknown, free: new Map(answer.free) };
    });
  }

  /** Ends the worker; bodies being parsed are parsed on the event loop. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll();
    if (worker !== undefined) await worker.terminate();
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const { source, eval: evaluated } = workerSource();
    const worker = new Worker(source, {
      eval: evaluated,
      workerData: { maxStandInItems: MAX_STAND_IN_ITEMS },
      // A body of 1 MiB is some 40 MB parsed; several queued stay well within this. A young
      // generation of 192 MB (semi-spaces of 64 MB) holds one parsed body whole, so its objects
      // die there instead of being promoted: with V8's default (16 MB semi-spaces) every body went
      // to the old generation and the worker ran a full, compacting collection for nearly every one
      // (48 in 60 bodies; 6 with this), taking CPU from the sandbox's thread on a small machine.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 192 },
    });
    worker.unref();
    worker.on('message', (message: { id: number; answer: WorkerAnswer }) => {
      const resolve = this.pending.get(message.id);
      this.pending.delete(message.id);
      resolve?.(message.answer);
    });
    const gone = () => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    return worker;
  }

  private failAll(): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const resolve of waiting) resolve(undefined);
  }
}
