/**
 * The facts of the service's interface description that the contract tests check, as data this
 * project owns (`test/data/interface-description.json`): the operations it writes as
 * `METHOD {address}/path`, the URL it names without a method (the browser script), the operations it
 * names only in words, every element it leaves "not shown", the stage steps it lists, and the
 * names of the fields, parameters and headers it writes.
 *
 * The tests read nothing outside the repository: when the description changes, this data file is
 * edited with it, and the tests then say what the contract must follow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, type Family } from './documents.js';

export const DESCRIPTION_DATA_FILE = 'test/data/interface-description.json';

type Address = '{base_url}' | '{web_url}' | '{sdk_url}';

/** One operation of the description. */
export interface DescribedOperation {
  /** Upper case; `null` for a URL the description names without a method (fetched with GET). */
  method: string | null;
  address: Address;
  /** The path after the address, e.g. `/api/merchant/{id}`. */
  path: string;
  /** The query the description writes after `?`, e.g. `include=stage`. */
  query?: string;
  family: Family;
  /** The description's section that writes it. */
  section: string;
}

export interface DescriptionFacts {
  operations: DescribedOperation[];
  /** Operations named only in words ("Method, path and payloads: not shown"). */
  operationsNamedInWords: { phrase: string; section: string }[];
  /** One key per "not shown": the table row's first cell, else the sentence that says it. */
  notShown: { key: string; section: string }[];
  /** The values of `transactionStage.nextStep.step`. */
  stageSteps: string[];
  /**
   * The names of the body fields, parameters and headers the description writes, by family: the
   * last part of a dotted name (`merchant.brandName` gives `brandName`). Any other name in a
   * family's document was decided by this contract and carries `x-decision`.
   */
  names: Record<Family, string[]>;
}

export const DESCRIPTION: DescriptionFacts = JSON.parse(
  readFileSync(join(ROOT, DESCRIPTION_DATA_FILE), 'utf8'),
) as DescriptionFacts;

/** How the description writes an operation, for test names: `GET {base_url}/api/merchant/{id}`. */
export function written(operation: DescribedOperation): string {
  const url = `${operation.address}${operation.path}${operation.query === undefined ? '' : `?${operation.query}`}`;
  return operation.method === null ? `GET ${url} (named without a method)` : `${operation.method} ${url}`;
}

/** The cells of a Markdown table row, or undefined for any other line (and for `|---|` rows). */
export function markdownCells(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('|')) return undefined;
  const cells = trimmed.replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
  if (cells.every((cell) => /^:?-+:?$/.test(cell))) return undefined;
  return cells;
}

export function normaliseSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
