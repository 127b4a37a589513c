'use strict';
/**
 * The context the family modules work with: settings, state made by the setup, the bundled
 * document, unique ids of this run, and an HTTP helper for the setup calls.
 */
const { pointerGet } = require('./response-check.cjs');

const SETUP_TIMEOUT_MS = 30_000;

class Kit {
  constructor(settings, checker, log) {
    this.settings = settings;
    this.checker = checker;
    this.document = checker.document;
    this.log = log;
    /** What the setup created, by name (ids, credentials). */
    this.state = {};
    /** Why the setup could not create something, by state name. */
    this.missing = {};
    this.setupError = undefined;
  }

  /** A unique id of this run: `${runId}_${suffix}` (letters, digits, `_`: valid for D24). */
  id(suffix) {
    return `${this.settings.runId}_${suffix}`;
  }

  /** A state value made by the setup; throws a sentence saying why it is missing. */
  need(key) {
    if (this.state[key] !== undefined) return this.state[key];
    const why = this.missing[key] || this.setupError || 'the setup did not run';
    throw new NeedError(`needs ${key} from the setup, which failed: ${why}`);
  }

  /** Records why the setup could not make `key`; transactions that need it fail with the reason. */
  miss(key, reason) {
    if (this.missing[key] === undefined) this.missing[key] = reason;
  }

  /** The security requirements of an operation (operation-level, else the document's). */
  security(path, method) {
    const operation = this.checker.operation(path, method);
    if (operation && Array.isArray(operation.security)) return operation.security;
    return Array.isArray(this.document.security) ? this.document.security : [];
  }

  /** The request body schema of an operation (references resolved at the top), or undefined. */
  requestSchema(path, method, mediaType = 'application/json') {
    const operation = this.checker.operation(path, method);
    let body = operation && operation.requestBody;
    while (body && typeof body.$ref === 'string') body = pointerGet(this.document, body.$ref);
    let schema = body && body.content && body.content[mediaType] && body.content[mediaType].schema;
    while (schema && typeof schema.$ref === 'string') schema = pointerGet(this.document, schema.$ref);
    return schema;
  }

  /**
   * One HTTP call of the setup. `body` is sent exactly as given (a string) so that the caller can
   * sign it; answers { status, headers, text, json }.
   */
  async call(method, path, { body, headers = {} } = {}) {
    // The sandbox's test controls are not part of the contract: a proxy in front of the server
    // (prism proxy) does not forward them, so they may live at another URL (--controls).
    const base = path.startsWith('/sandbox/') ? this.settings.controls : this.settings.server;
    const url = `${base}${path}`;
    const response = await fetch(url, {
      method,
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(SETUP_TIMEOUT_MS),
    });
    const text = await response.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }
}

/** A transaction cannot be prepared because the setup did not make what it needs. */
class NeedError extends Error {}

/** A sentence for an unexpected setup answer. */
function unexpected(what, response) {
  const body = String(response.text || '').replace(/\s+/g, ' ').slice(0, 300);
  return `${what} answered ${response.status}${body ? `: ${body}` : ''}`;
}

module.exports = { Kit, NeedError, unexpected };
