/**
 * Runs Dredd in this (child) process for one family and reports every result to the parent
 * (./run.ts) over the IPC channel, or as JSON lines on stdout without one. ./run.ts bundles it
 * with the hook file (./hooks.ts) into CommonJS files side by side (`driver.cjs`, `hooks.cjs`).
 *
 * Dredd's own console output is silenced: its reporter prints the request of a failed
 * transaction, headers included (Basic credentials, signatures). The parent prints a summary.
 *
 * Messages: { type: 'test', name, status: 'pass'|'fail'|'skip'|'error', message?, reason? }
 *           { type: 'setup', notes: string[] }
 *           { type: 'end', error?: string, stats }
 */
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import Dredd from 'dredd';
import dreddLoggerModule from 'dredd/build/logger';
import reporterOutputModule from 'dredd/build/reporters/reporterOutputLogger';
import { contractOf } from '../../src/contract/index.js';
import { prepareForDredd } from './prepare-document.js';
import { registry } from './registry.js';
import { ENV, readSettings } from './settings.js';

/** A message to the parent (./run.ts). */
export type DriverMessage =
  | { type: 'test'; name: string; status: 'pass' | 'fail' | 'skip' | 'error'; message?: string; reason?: string | undefined }
  | { type: 'setup'; notes: string[] }
  | { type: 'end'; error?: string | undefined; stats?: unknown };

/** What Dredd's emitter passes for a test. */
interface DreddTest {
  title?: string;
  message?: unknown;
}

const names = process.env[ENV.names] === '1';

function send(message: DriverMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else process.stdout.write(`${JSON.stringify(message)}\n`, () => resolve());
  });
}

const pending: Promise<void>[] = [];
let finished = false;
function emit(message: DriverMessage): void {
  if (finished) return;
  pending.push(send(message));
}

async function finish(message: DriverMessage, code: number): Promise<void> {
  if (finished) return;
  finished = true;
  pending.push(send(message));
  await Promise.all(pending);
  if (process.disconnect && process.connected) process.disconnect();
  process.exit(code);
}

function main(): void {
  const settings = readSettings(process.env);
  reporterOutputModule.default.transports.console.silent = true;
  const dreddConsole = dreddLoggerModule.default.transports.console;
  dreddConsole.level = 'error';
  dreddConsole.colorize = false;

  const document = prepareForDredd(contractOf(settings.family, settings.document).document);
  const report = registry();
  const emitter = new EventEmitter();
  const nameOf = new WeakMap<DreddTest, string>();

  emitter.on('test start', (test: DreddTest) => {
    if (!names && !report.hooksLoaded) {
      // Dredd goes on without a hook file that failed to load; the kit must not.
      void finish({ type: 'end', error: `the hook file could not be loaded: ${report.hooksError || 'unknown error'}` }, 2);
      return;
    }
    nameOf.set(test, String(test.message));
  });
  emitter.on('test pass', (test: DreddTest) => {
    emit({ type: 'test', name: nameOf.get(test) || String(test.title), status: 'pass' });
  });
  emitter.on('test skip', (test: DreddTest) => {
    const name = nameOf.get(test) || String(test.title);
    emit({ type: 'test', name, status: 'skip', reason: names ? 'listed only (--names)' : report.skips.get(name) });
  });
  emitter.on('test fail', (test: DreddTest) => {
    const name = nameOf.get(test) || String(test.title);
    const ours = report.problems.get(name) ?? [];
    const dredd = String(test.message || '').trim();
    const parts = [...ours];
    // Dredd repeats the kit's message ("Failed in after hook: ...") or says less (the status code);
    // its own words are kept only when the kit found nothing.
    if (parts.length === 0 && dredd) parts.push(`Dredd: ${dredd.replace(/\n+/g, '; ')}`);
    emit({ type: 'test', name, status: 'fail', message: parts.join('; ') || 'failed (no message)' });
  });
  emitter.on('test error', (error: unknown, test: DreddTest | undefined) => {
    const name = (test && (nameOf.get(test) || (typeof test.message === 'string' ? test.message : undefined))) || '(hooks)';
    emit({ type: 'test', name, status: 'error', message: error instanceof Error ? error.message : String(error) });
  });

  const dredd = new Dredd({
    endpoint: settings.server,
    path: [],
    apiDescriptions: [{ location: `${settings.family}.json (prepared for Dredd)`, content: JSON.stringify(document) }],
    // This file runs as the bundle driver.cjs, next to the bundled hook file.
    hookfiles: names ? [] : [join(__dirname, 'hooks.cjs')],
    names,
    loglevel: 'error',
    color: false,
    emitter,
  });
  dredd.run((error, stats) => {
    if (report.setupNotes.length > 0) emit({ type: 'setup', notes: report.setupNotes });
    const summary = stats ? { tests: stats.tests, passes: stats.passes, failures: stats.failures, errors: stats.errors, skipped: stats.skipped } : undefined;
    void finish({ type: 'end', error: error ? error.message : undefined, stats: summary }, error ? 2 : 0);
  });
}

try {
  main();
} catch (error) {
  void finish({ type: 'end', error: error instanceof Error ? error.message : String(error) }, 2);
}
