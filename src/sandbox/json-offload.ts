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
 * - The worker is plain JavaScript evaluated from a string (no file to find once built or under
 *   the test runner), so it cannot import: its depth check repeats src/http/json.ts's and its
 *   measuring stored-json.ts's, and a test holds both to the same verdicts and refusals.
 */
import { Worker } from 'node:worker_threads';

/** Bodies of at least this many bytes are parsed in the worker: smaller ones parse in a few ms. */
export const OFFLOAD_BYTES = 64 * 1024;

/**
 * A free value as the worker measured it: `over` names the limit it passes (then `text` is empty),
 * else `text` is its JSON text and `bytes` its UTF-8 bytes.
 */
export interface MeasuredJson {
  over?: 'members' | 'depth';
  text: string;
  bytes: number;
}

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

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { maxStandInItems } = workerData;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function mayNestDeeperThan(bytes, limit) {
  if (bytes.length <= 2 * limit) return false;
  let openings = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if ((byte === 0x7b || byte === 0x5b) && ++openings > limit) return true;
  }
  return false;
}
function nestedDeeperThan(value, limit) {
  const pending = [[value, 1]];
  while (pending.length > 0) {
    const [node, level] = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (level > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, level + 1]);
  }
  return false;
}
function measure(value, maxMembers, maxDepth) {
  if (value === null || typeof value !== 'object') return undefined;
  const pending = [value];
  const levels = [1];
  let members = 0;
  while (pending.length > 0) {
    const node = pending.pop();
    const level = levels.pop();
    if (level > maxDepth) return 'depth';
    if (Array.isArray(node)) {
      members += node.length;
      if (members > maxMembers) return 'members';
      for (const child of node) if (child !== null && typeof child === 'object') { pending.push(child); levels.push(level + 1); }
    } else {
      for (const key in node) {
        members++;
        if (members > maxMembers) return 'members';
        const child = node[key];
        if (child !== null && typeof child === 'object') { pending.push(child); levels.push(level + 1); }
      }
    }
  }
  return undefined;
}
function standIn(value) {
  if (Array.isArray(value)) return [];
  const stand = {};
  if (Object.hasOwn(value, 'webhook_url')) {
    const url = value.webhook_url;
    stand.webhook_url = url === null || typeof url !== 'object' ? url : Array.isArray(url) ? [] : {};
  }
  return stand;
}
function parse(message) {
  let text;
  try { text = UTF8.decode(message.bytes); } catch { return { ok: false, problem: 'utf-8' }; }
  let value;
  try { value = JSON.parse(text); } catch (error) {
    return { ok: false, problem: 'syntax', reason: error instanceof SyntaxError ? error.message : 'syntax error' };
  }
  if (mayNestDeeperThan(message.bytes, message.maxDepth) && nestedDeeperThan(value, message.maxDepth)) return { ok: false, problem: 'depth' };
  const free = [];
  for (const pointer of message.pointers) {
    const names = pointer.split('/').slice(1);
    let parent = value;
    for (const name of names.slice(0, -1)) parent = parent !== null && typeof parent === 'object' && !Array.isArray(parent) && Object.hasOwn(parent, name) ? parent[name] : undefined;
    const last = names[names.length - 1];
    if (parent === null || typeof parent !== 'object' || Array.isArray(parent) || !Object.hasOwn(parent, last)) continue;
    const found = parent[last];
    if (found === null || typeof found !== 'object' || (Array.isArray(found) && found.length > maxStandInItems)) continue;
    const over = measure(found, message.jsonMembers, message.jsonDepth);
    const kept = over === undefined ? JSON.stringify(found) : '';
    free.push([pointer, { ...(over === undefined ? {} : { over }), text: kept, bytes: Buffer.byteLength(kept, 'utf8') }]);
    parent[last] = standIn(found);
  }
  return { ok: true, rest: JSON.stringify(value), free };
}
parentPort.on('message', (message) => {
  let answer;
  try { answer = parse(message); } catch (error) { answer = { ok: false, problem: 'failed', reason: String(error) }; }
  parentPort.postMessage({ id: message.id, answer });
});
`;

interface WorkerAnswer {
  ok: boolean;
  problem?: 'utf-8' | 'syntax' | 'depth' | 'failed';
  reason?: string;
  rest?: string;
  free?: [string, MeasuredJson][];
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
      worker.postMessage({ id, bytes, pointers, ...limits });
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
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { maxStandInItems: MAX_STAND_IN_ITEMS },
      // A body of 1 MiB is some 40 MB parsed; several queued stay well within this.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
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
