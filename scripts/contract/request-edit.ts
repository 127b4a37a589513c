/** Small edits of a Dredd transaction's request: headers, JSON body, path. */
import type { DreddTransaction, Edit } from './types.js';

const ONE_MIB = 1024 * 1024;

/** Sets a request header, replacing any spelling of the same name. */
export function setHeader(transaction: DreddTransaction, name: string, value: string): void {
  const headers = transaction.request.headers;
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  headers[name] = value;
}

/** The request body parsed as JSON (undefined when there is no body); `any`: the plans change bodies of every shape. */
export function jsonBody(transaction: DreddTransaction): any {
  const body = transaction.request.body;
  if (body === undefined || body === null || body === '') return undefined;
  return JSON.parse(body);
}

export function setJsonBody(transaction: DreddTransaction, value: unknown): void {
  transaction.request.body = JSON.stringify(value);
}

/** An edit that changes the JSON body (`{}` when there is none); `any`: the plans change bodies of every shape. */
export function editJson(change: (value: any) => unknown): Edit {
  return (transaction) => {
    const value = jsonBody(transaction) || {};
    change(value);
    setJsonBody(transaction, value);
  };
}

/** The edits one after the other. */
export function all(...edits: Edit[]): Edit {
  return (transaction) => {
    for (const change of edits) change(transaction);
  };
}

/**
 * Makes the body larger than 1 MiB (D24) without changing what it means: JSON allows any
 * amount of whitespace after the value, so the body stays valid JSON and valid for the schema.
 */
export function padBodyOverLimit(transaction: DreddTransaction): void {
  const body = transaction.request.body || '{}';
  const size = Buffer.byteLength(body, 'utf8');
  transaction.request.body = body + ' '.repeat(Math.max(0, ONE_MIB - size) + 1024);
}

/** The part of fullPath that the server URL adds before the document's paths. */
function basePath(transaction: DreddTransaction): string {
  const { fullPath } = transaction;
  const uri = transaction.request.uri;
  return fullPath.endsWith(uri) ? fullPath.slice(0, fullPath.length - uri.length) : '';
}

function splitUri(uri: string): { path: string; query: string } {
  const at = uri.indexOf('?');
  return at === -1 ? { path: uri, query: '' } : { path: uri.slice(0, at), query: uri.slice(at + 1) };
}

function setUri(transaction: DreddTransaction, path: string, query: string): void {
  const base = basePath(transaction);
  const uri = query ? `${path}?${query}` : path;
  transaction.request.uri = uri;
  transaction.fullPath = `${base}${uri}`;
}

/**
 * Rewrites the request path from its template (`/api/merchant/{id}`) and values, keeping the
 * query. Values are percent-encoded.
 */
export function setPath(transaction: DreddTransaction, template: string, values: Record<string, string | undefined>): void {
  const path = splitUri(template).path.replace(/\{([^}?&]+)\}/g, (match, name: string) =>
    values[name] === undefined ? match : encodeURIComponent(String(values[name])),
  );
  setUri(transaction, path, splitUri(transaction.request.uri).query);
}

/** Replaces the query string (without `?`; '' removes it), keeping the path. */
export function setQuery(transaction: DreddTransaction, query: string): void {
  setUri(transaction, splitUri(transaction.request.uri).path, query);
}
