/**
 * The context the family modules work with: settings, state made by the setup, the contract
 * model of the document, unique ids of this run, and an HTTP helper for the setup calls.
 */
import type { Contract, ContractOperation } from '../../src/contract/index.js';
import type { Settings } from './settings.js';
import type { AuthMode, DreddTransaction, Operation, Plan } from './types.js';

const SETUP_TIMEOUT_MS = 30_000;

/** One answer to a setup call. */
export interface SetupResponse {
  status: number;
  headers: Headers;
  text: string;
  // `any`: the setup reads answers of every shape (merchants, transactions, stages).
  json: any;
}

export class Kit {
  /** What the setup created, by name (ids, credentials); `any`: each family keeps its own shapes. */
  readonly state: Record<string, any> = {};
  /** Why the setup could not create something, by state name. */
  readonly missing: Record<string, string> = {};
  setupError: string | undefined;

  constructor(
    readonly settings: Settings,
    readonly contract: Contract,
  ) {}

  /** A unique id of this run: `${runId}_${suffix}` (letters, digits, `_`: valid for D24). */
  id(suffix: string): string {
    return `${this.settings.runId}_${suffix}`;
  }

  /** A state value made by the setup; throws a sentence saying why it is missing. */
  need(key: string): any {
    if (this.state[key] !== undefined) return this.state[key];
    const why = this.missing[key] ?? this.setupError ?? 'the setup did not run';
    throw new NeedError(`needs ${key} from the setup, which failed: ${why}`);
  }

  /** Records why the setup could not make `key`; transactions that need it fail with the reason. */
  miss(key: string, reason: string): void {
    if (this.missing[key] === undefined) this.missing[key] = reason;
  }

  /** The operation of (path template, method) in the document. */
  operation(path: string, method: string): ContractOperation | undefined {
    return this.contract.at(path, method);
  }

  /**
   * One HTTP call of the setup. `body` is sent exactly as given (a string) so that the caller can
   * sign it.
   */
  async call(method: string, path: string, { body, headers = {} }: { body?: string | undefined; headers?: Record<string, string> } = {}): Promise<SetupResponse> {
    // The sandbox's test controls are not part of the contract: a proxy in front of the server
    // (prism proxy) does not forward them, so they may live at another URL (--controls).
    const base = path.startsWith('/sandbox/') ? this.settings.controls : this.settings.server;
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(SETUP_TIMEOUT_MS),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }
}

/** A transaction cannot be prepared because the setup did not make what it needs. */
export class NeedError extends Error {}

/** A sentence for an unexpected setup answer. */
export function unexpected(what: string, response: SetupResponse): string {
  const body = String(response.text || '').replace(/\s+/g, ' ').slice(0, 300);
  return `${what} answered ${response.status}${body ? `: ${body}` : ''}`;
}

/** A family module of ./families/. */
export interface FamilyModule {
  codeField: string;
  authenticate(kit: Kit, transaction: DreddTransaction, op: Operation, mode: AuthMode): void;
  setup?(kit: Kit): Promise<void>;
  plan(kit: Kit, op: Operation): Plan;
}
