'use strict';
/**
 * Runs Dredd in this (child) process for one family and reports every result to the parent
 * (scripts/contract/run.ts) over the IPC channel, or as JSON lines on stdout without one.
 *
 * Dredd's own console output is silenced: its reporter prints the request of a failed
 * transaction, headers included (Basic credentials, signatures). The parent prints a summary.
 *
 * Messages: { type: 'test', name, status: 'pass'|'fail'|'skip'|'error', message?, reason? }
 *           { type: 'setup', notes: string[] }
 *           { type: 'end', error?: string, stats }
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { EventEmitter } = require('node:events');
const Dredd = require('dredd');
const dreddLogger = require('dredd/build/logger').default;
const reporterOutput = require('dredd/build/reporters/reporterOutputLogger').default;
const { readSettings } = require('./settings.cjs');
const { prepareForDredd } = require('./prepare-document.cjs');
const { registry } = require('./registry.cjs');

const names = process.env.PAYLATER_CONTRACT_NAMES === '1';

function send(message) {
  return new Promise((resolve) => {
    if (process.send) process.send(message, () => resolve());
    else process.stdout.write(`${JSON.stringify(message)}\n`, () => resolve());
  });
}

const pending = [];
let finished = false;
function emit(message) {
  if (finished) return;
  pending.push(send(message));
}

async function finish(message, code) {
  if (finished) return;
  finished = true;
  pending.push(send(message));
  await Promise.all(pending);
  if (process.disconnect && process.connected) process.disconnect();
  process.exit(code);
}

function main() {
  const settings = readSettings(process.env);
  reporterOutput.transports.console.silent = true;
  dreddLogger.transports.console.level = 'error';
  dreddLogger.transports.console.colorize = false;

  const document = prepareForDredd(JSON.parse(readFileSync(settings.document, 'utf8')));
  const report = registry();
  const emitter = new EventEmitter();
  const nameOf = new WeakMap();

  emitter.on('test start', (test) => {
    if (!names && !report.hooksLoaded) {
      // Dredd goes on without a hook file that failed to load; the kit must not.
      finish({ type: 'end', error: `the hook file could not be loaded: ${report.hooksError || 'unknown error'}` }, 2);
      return;
    }
    nameOf.set(test, test.message);
  });
  emitter.on('test pass', (test) => {
    emit({ type: 'test', name: nameOf.get(test) || test.title, status: 'pass' });
  });
  emitter.on('test skip', (test) => {
    const name = nameOf.get(test) || test.title;
    if (names) emit({ type: 'test', name, status: 'skip', reason: 'listed only (--names)' });
    else emit({ type: 'test', name, status: 'skip', reason: report.skips.get(name) });
  });
  emitter.on('test fail', (test) => {
    const name = nameOf.get(test) || test.title;
    const ours = report.problems.get(name) || [];
    const dredd = String(test.message || '').trim();
    const parts = [...ours];
    // Dredd repeats the kit's message ("Failed in after hook: ...") or says less (the status code);
    // its own words are kept only when the kit found nothing.
    if (parts.length === 0 && dredd) parts.push(`Dredd: ${dredd.replace(/\n+/g, '; ')}`);
    emit({ type: 'test', name, status: 'fail', message: parts.join('; ') || 'failed (no message)' });
  });
  emitter.on('test error', (error, test) => {
    const name = (test && (nameOf.get(test) || (typeof test.message === 'string' ? test.message : undefined))) || '(hooks)';
    emit({ type: 'test', name, status: 'error', message: error && error.message ? error.message : String(error) });
  });

  const dredd = new Dredd({
    endpoint: settings.server,
    path: [],
    apiDescriptions: [{ location: `${settings.family}.json (prepared for Dredd)`, content: JSON.stringify(document) }],
    hookfiles: names ? [] : [join(__dirname, 'hooks.cjs')],
    names,
    loglevel: 'error',
    color: false,
    emitter,
  });
  dredd.run((error, stats) => {
    if (report.setupNotes.length > 0) emit({ type: 'setup', notes: report.setupNotes });
    const summary = stats ? { tests: stats.tests, passes: stats.passes, failures: stats.failures, errors: stats.errors, skipped: stats.skipped } : undefined;
    finish({ type: 'end', error: error ? error.message : undefined, stats: summary }, error ? 2 : 0);
  });
}

try {
  main();
} catch (error) {
  finish({ type: 'end', error: error && error.message ? error.message : String(error) }, 2);
}
