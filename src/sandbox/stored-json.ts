/**
 * Free JSON the sandbox keeps for a client (`notes` of web and gateway transactions, the `data` of
 * extras pushes), kept as its JSON text and parsed only when read (docs/sandbox.md, "Limits and
 * memory budget"). Parsed, a JSON value made of small objects costs V8 about 35 times its
 * bytes (1 MiB of `[{},{},...]` is 35 MiB of heap); its text costs its bytes. The text is the
 * value serialised again (`JSON.stringify`), which reads back as the same JSON value, and an answer
 * carries it as it is, not parsed again (src/http/raw-json.ts).
 *
 * Before it is kept, a value is measured: at most `jsonMembers` values (the members of its objects
 * and the items of its arrays, at every level) and `jsonDepth` levels of nesting. Both bound what a
 * read costs when it parses the text again.
 */
import { RawJson } from '../http/raw-json.js';
import type { LimitSettings } from './config.js';

/**
 * A free value as the large-body worker measured it (json-worker.ts): `over` names the limit it passes (then `text` is empty),
 * else `text` is its JSON text and `bytes` its UTF-8 bytes.
 */
export interface MeasuredJson {
  over?: 'members' | 'depth';
  text: string;
  bytes: number;
}

/** A JSON value kept as text: its text and how many bytes (UTF-8) it counts against a budget. */
export interface KeptJson {
  text: string;
  bytes: number;
}

export type KeepResult = { ok: true; kept: KeptJson } | { ok: false; problem: string; issue: string };

/**
 * The text of `value` when it is within the limits of members and depth; otherwise a sentence
 * saying which limit it passes and how to stay within it. `what` names the value (`notes`, `data`).
 */
export function keepJson(value: unknown, what: string, limits: Pick<LimitSettings, 'jsonMembers' | 'jsonDepth'>): KeepResult {
  const over = measureJson(value, limits.jsonMembers, limits.jsonDepth);
  if (over !== undefined) return overLimit(over, what, limits);
  const text = JSON.stringify(value);
  return { ok: true, kept: { text, bytes: Buffer.byteLength(text, 'utf8') } };
}

/**
 * {@link keepJson}'s answer for a value the worker measured and wrote as text (json-offload.ts),
 * `request.kept`'s entry for the value; `fallback` (the value in the body) when there is none.
 */
export function keepMeasured(
  measured: MeasuredJson | undefined,
  fallback: unknown,
  what: string,
  limits: Pick<LimitSettings, 'jsonMembers' | 'jsonDepth'>,
): KeepResult {
  if (measured === undefined) return keepJson(fallback, what, limits);
  if (measured.over !== undefined) return overLimit(measured.over, what, limits);
  return { ok: true, kept: { text: measured.text, bytes: measured.bytes } };
}

function overLimit(over: 'members' | 'depth', what: string, limits: Pick<LimitSettings, 'jsonMembers' | 'jsonDepth'>): KeepResult & { ok: false } {
  if (over === 'members') {
    return {
      ok: false,
      problem:
        `${what} holds more than ${limits.jsonMembers} values (members of objects and items of arrays, counted at every level); ` +
        `the sandbox keeps at most ${limits.jsonMembers}. Send fewer values, or start the sandbox with a higher --max-json-members.`,
      issue: `must hold at most ${limits.jsonMembers} values`,
    };
  }
  return {
    ok: false,
    problem:
      `${what} is nested more than ${limits.jsonDepth} levels deep; the sandbox keeps at most ${limits.jsonDepth} levels. ` +
      'Flatten it, or start the sandbox with a higher --max-json-depth.',
    issue: `must be nested at most ${limits.jsonDepth} levels`,
  };
}

/**
 * The value of a kept text, for an answer: written into the answer as the text it is
 * (src/http/raw-json.ts), never parsed on the way (typed as the value it stands for).
 */
export function readJson<T = unknown>(text: string): T {
  return new RawJson(text) as unknown as T;
}

/**
 * Counts the values of `value` and its nesting, iteratively, stopping as soon as one limit is
 * passed (a million-item array is not walked to its end to be refused). The large-body worker
 * (json-worker.ts) measures with it too.
 */
export function measureJson(value: unknown, maxMembers: number, maxDepth: number): 'members' | 'depth' | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const pending: unknown[] = [value];
  const levels: number[] = [1];
  let members = 0;
  while (pending.length > 0) {
    const node = pending.pop() as object;
    const level = levels.pop()!;
    if (level > maxDepth) return 'depth';
    if (Array.isArray(node)) {
      members += node.length;
      if (members > maxMembers) return 'members';
      for (const child of node) {
        if (child !== null && typeof child === 'object') {
          pending.push(child);
          levels.push(level + 1);
        }
      }
    } else {
      for (const key in node) {
        members++;
        if (members > maxMembers) return 'members';
        const child = (node as Record<string, unknown>)[key];
        if (child !== null && typeof child === 'object') {
          pending.push(child);
          levels.push(level + 1);
        }
      }
    }
  }
  return undefined;
}
