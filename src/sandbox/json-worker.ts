/**
 * The large-body worker's own module (started by json-offload.ts, one per sandbox): it parses a
 * body by the rules of every body with src/http/json.ts's own `parseJsonBody` (strict UTF-8, JSON
 * syntax, the nesting limit), measures each free value with stored-json.ts's own `measureJson`,
 * writes each as text, and answers the rest of the body as text with a stand-in in place of each
 * free value (json-offload.ts says what the event loop does with it).
 *
 * It is a module of its own, compiled with the project, so the rules run from one copy of their
 * code: dist/sandbox/json-worker.js once built, this file through tsx under the test runner.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseJsonBody } from '../http/json.js';
import { measureJson } from './stored-json.js';
import type { MeasuredJson } from './stored-json.js';

/** What the event loop asks: parse `bytes`, keep the free values at `pointers` as text. */
export interface WorkerRequest {
  id: number;
  bytes: Uint8Array;
  pointers: readonly string[];
  /** The nesting limit of every body. */
  maxDepth: number;
  jsonMembers: number;
  jsonDepth: number;
}

/** What the worker answers; `problem: 'failed'` when it threw (the event loop then parses itself). */
export interface WorkerAnswer {
  ok: boolean;
  problem?: 'utf-8' | 'syntax' | 'depth' | 'failed';
  reason?: string;
  rest?: string;
  free?: [string, MeasuredJson][];
}

/** Set by json-offload.ts (and its presence marks the worker it starts): a longer array is left in place, so validation refuses it. */
const maxStandInItems = (workerData as { maxStandInItems?: unknown } | null)?.maxStandInItems;

/** An empty object or array of the value's type, keeping `webhook_url` (not its object), which the sandbox reads. */
function standIn(value: object): unknown {
  if (Array.isArray(value)) return [];
  const stand: Record<string, unknown> = {};
  if (Object.hasOwn(value, 'webhook_url')) {
    const url = (value as Record<string, unknown>).webhook_url;
    stand.webhook_url = url === null || typeof url !== 'object' ? url : Array.isArray(url) ? [] : {};
  }
  return stand;
}

/** The parent object of a JSON pointer's last name (pointers without escapes), when there is one. */
function parentOf(value: unknown, names: readonly string[]): Record<string, unknown> | undefined {
  let parent = value;
  for (const name of names.slice(0, -1)) {
    parent = isRecord(parent) && Object.hasOwn(parent, name) ? parent[name] : undefined;
  }
  return isRecord(parent) ? parent : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parse(request: WorkerRequest): WorkerAnswer {
  const parsed = parseJsonBody(request.bytes, request.maxDepth);
  if (!parsed.ok) return { ok: false, problem: parsed.problem, ...(parsed.problem === 'syntax' ? { reason: parsed.reason } : {}) };
  const { value } = parsed;
  const free: [string, MeasuredJson][] = [];
  for (const pointer of request.pointers) {
    const names = pointer.split('/').slice(1);
    const last = names[names.length - 1]!;
    const parent = parentOf(value, names);
    if (parent === undefined || !Object.hasOwn(parent, last)) continue;
    const found = parent[last];
    if (found === null || typeof found !== 'object' || (Array.isArray(found) && found.length > (maxStandInItems as number))) continue;
    const over = measureJson(found, request.jsonMembers, request.jsonDepth);
    const text = over === undefined ? JSON.stringify(found) : '';
    free.push([pointer, { ...(over === undefined ? {} : { over }), text, bytes: Buffer.byteLength(text, 'utf8') }]);
    parent[last] = standIn(found);
  }
  return { ok: true, rest: JSON.stringify(value), free };
}

// Only in the worker json-offload.ts starts: imported anywhere else (another thread, a test
// runner's own worker), it listens to nothing.
const port = typeof maxStandInItems === 'number' ? parentPort : null;
port?.on('message', (request: WorkerRequest) => {
  let answer: WorkerAnswer;
  try {
    answer = parse(request);
  } catch (error) {
    answer = { ok: false, problem: 'failed', reason: String(error) };
  }
  port.postMessage({ id: request.id, answer });
});
