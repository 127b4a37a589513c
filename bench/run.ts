/**
 * `npm run bench`: every figure is a ratio taken side by side in one run, because the machines
 * are shared and noisy. `--only signatures,clients,size,sandbox,request-log` runs a subset; `--sandbox-before DIR`
 * measures the sandbox of another checkout beside this one (bench/sandbox.ts). `soak` (the sandbox
 * under a load test, bench/soak.ts), `attack`, `shared` (the sandbox on PostgreSQL against memory,
 * one to three processes, and a long advance: bench/shared.ts, `--expiries N`) and `shared-faults`
 * (the shared sandbox's database stopped, restarted, its disk full, its first process killed, a
 * start on a large database: bench/shared-faults.ts, `--rows N`, `--cases a,b,c,d,e,f`) run only when
 * named: `--only soak [--transactions N] [--timers N] [--sandbox-node-options="..."]`.
 */
import { parseArgs } from 'node:util';
import { ATTACK_NAMES, benchAttack, type AttackName } from './attack/index.js';
import { benchClients } from './client.js';
import { benchRequestLog } from './request-log.js';
import { benchSandbox } from './sandbox.js';
import { benchSharedFaults } from './shared-faults.js';
import { benchShared, type AdvanceFigures } from './shared.js';
import { benchSignatures } from './signatures.js';
import { benchSoak } from './soak.js';
import { benchSizes } from './size.js';

const ALL = ['signatures', 'clients', 'size', 'sandbox', 'request-log'] as const;
/** Run only when named with --only (they take minutes). */
const ON_REQUEST = ['soak', 'attack', 'shared', 'shared-faults'] as const;
const USAGE = `Usage: npm run bench [-- --only ${[...ALL, ...ON_REQUEST].join(',')}] [--transactions N] [--timers N] [--sandbox-node-options="--cpu-prof ..."] [--attack ${ATTACK_NAMES.join(',')}] [--sandbox-flags="..."] [--sandbox-before DIR]
  shared:        the shared sandbox (PostgreSQL) beside memory, x1/x2/x3 processes, commits per request, a long advance [--expiries N] (20000) [--advance-rounds N] (3) [--advance-only] (the long advance alone)
  shared-faults: database stopped under load, restarted with deliveries in flight, full disk, first process killed, starts on a large database, large writes
                 [--rows N] (1000000) [--cases a,b,c,d,e,f]\n`;
const values = ((): ReturnType<typeof readOptions> => {
  try {
    return readOptions();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n${USAGE}`);
    process.exit(2);
  }
})();
function readOptions() {
  return parseArgs({
    options: {
      only: { type: 'string' },
      transactions: { type: 'string' },
      timers: { type: 'string' },
      'sandbox-node-options': { type: 'string' },
      attack: { type: 'string' },
      'sandbox-flags': { type: 'string' },
      'sandbox-before': { type: 'string' },
      expiries: { type: 'string' },
      'advance-rounds': { type: 'string' },
      'advance-only': { type: 'boolean' },
      rows: { type: 'string' },
      cases: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const only = values.only?.split(',').map((s) => s.trim()) ?? [...ALL];
const unknown = only.filter((name) => !([...ALL, ...ON_REQUEST] as readonly string[]).includes(name));
if (unknown.length > 0) {
  process.stderr.write(`Unknown benchmark: ${unknown.join(', ')} (choose from ${[...ALL, ...ON_REQUEST].join(', ')})\n`);
  process.exit(2);
}

const count = (name: string, value: string | undefined, fallback: number, least = 100): number => {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,8}$/.test(value) || Number(value) < least) {
    process.stderr.write(`--${name} must be a whole number from ${least} to 99999999\n`);
    process.exit(2);
  }
  return Number(value);
};
const fmt = (n: number, digits = 2) => n.toFixed(digits);
const out = (line: string) => process.stdout.write(`${line}\n`);

if (only.includes('signatures')) {
  out('\n== Signatures: throughput ÷ raw node:crypto createHash("sha256") on the same input (target >= 0.90)');
  for (const { size, operation, pair } of benchSignatures()) {
    out(`  ${size.padEnd(6)} ${operation.padEnd(20)} ratio ${fmt(pair.ratio)}   (${fmt(pair.subjectOpsPerSecond, 0)} vs ${fmt(pair.baselineOpsPerSecond, 0)} ops/s)`);
  }
}
if (only.includes('clients')) {
  out('\n== Clients: time per request ÷ plain fetch of the same request, local keep-alive server (target <= 1.10)');
  for (const f of await benchClients()) {
    out(`  ${f.client.padEnd(28)} ratio ${fmt(f.timeRatio)}   (${fmt(f.clientMicroseconds, 0)} µs vs ${fmt(f.fetchMicroseconds, 0)} µs)`);
  }
}
if (only.includes('size')) {
  out('\n== Browser-importable client entries, bundled by esbuild (minified, then gzipped)');
  for (const f of await benchSizes()) out(`  ${f.entry.padEnd(26)} ${f.minifiedBytes} B minified, ${f.gzippedBytes} B gzipped`);
}
if (only.includes('sandbox')) {
  out('\n== Sandbox vs a bare node:http server and the Prism mock: autocannon, 20 connections, same requests, same run');
  out('   (targets: ÷ node >= 0.6 on GET /sandbox/clock, >= 0.4 on the others; ÷ prism >= 10; sandbox p99 <= 5 ms; ratios: the median of the rounds\')');
  const { rows, ratios } = await benchSandbox({ before: values['sandbox-before'] });
  for (const r of rows) {
    const cpu = r.cpuMicroseconds === undefined ? '' : `   ${fmt(r.cpuMicroseconds, 1)} µs CPU a request`;
    out(`  ${r.operation.padEnd(18)} ${r.server.padEnd(8)} ${fmt(r.requestsPerSecond, 0).padStart(7)} req/s   p99 ${fmt(r.p99Ms, 1)} ms   non-2xx ${r.non2xx}   errors ${r.errors}${cpu}`);
  }
  for (const r of ratios) {
    const prism = r.ofPrism === undefined ? '' : `   sandbox ÷ prism ${fmt(r.ofPrism, 1)}x`;
    const before = r.beforeOfNode === undefined ? '' : `   (before ÷ node ${fmt(r.beforeOfNode)}x)`;
    const beforeCpu = r.beforeCpuOfNode === undefined ? '' : ` (before ${fmt(r.beforeCpuOfNode)}x)`;
    out(`  ${r.operation.padEnd(18)} sandbox ÷ node ${fmt(r.ofNode)}x (target ${fmt(r.nodeTarget, 1)}; of the means ${fmt(r.ofNodeOfMeans)}x)${prism}   sandbox p99 ${fmt(r.sandboxP99MedianMs, 1)} ms (worst round ${fmt(r.sandboxP99Ms, 1)} ms)${before}`);
    out(`  ${''.padEnd(18)} CPU a request, node's ÷ sandbox's ${fmt(r.cpuOfNode)}x${beforeCpu}`);
  }
}
if (only.includes('request-log')) {
  out('\n== Request log: the sandbox with it ÷ without, autocannon, 20 connections, same run (target: rate >= 0.90, CPU per request <= 1.10); the dashboard page');
  const f = await benchRequestLog();
  for (const r of f.rows) {
    out(`  ${r.operation.padEnd(13)} log ${r.log.padEnd(4)} ${fmt(r.requestsPerSecond, 0).padStart(7)} req/s   CPU ${fmt(r.cpuMicroseconds, 0).padStart(4)} µs/request   p99 ${fmt(r.p99Ms, 1)} ms   non-2xx ${r.non2xx}   errors ${r.errors}`);
  }
  for (const r of f.ratios) out(`  ${r.operation.padEnd(13)} on ÷ off: rate ${fmt(r.ratio)}   CPU per request ${fmt(r.cpuRatio)}`);
  out(`  ${f.logged} requests logged in the run; GET /dashboard ${f.page.bytes} B, ${f.page.gzippedBytes} B gzipped, ${f.page.brotliBytes} B Brotli`);
}
if (only.includes('shared')) {
  const expiries = count('expiries', values.expiries, 20_000);
  out('\n== Shared sandbox on PostgreSQL vs in memory: autocannon, 20 connections split between the processes, same run');
  out('   (targets: x2 ÷ x1 >= 0.9; no failed request; a status check on another process during a long advance within 2x memory\'s)');
  const advanceRounds = count('advance-rounds', values['advance-rounds'], 3, 1);
  const f = await benchShared(out, { expiries, advanceRounds, advanceOnly: values['advance-only'] === true });
  if (f !== undefined) {
    const commits = (c: number | undefined) => (c === undefined ? '   -' : fmt(c));
    for (const r of f.rows) {
      out(
        `  ${r.operation.padEnd(13)} ${r.setup.padEnd(21)} ${fmt(r.requestsPerSecond, 0).padStart(7)} req/s   p99 ${fmt(r.p99Ms, 1)} ms   ` +
          `commits/request ${commits(r.commitsPerRequest)}   non-2xx ${r.non2xx}   errors ${r.errors}`,
      );
    }
    for (const operation of f.summary.length === 0 ? [] : (['SDK initiate', 'SDK status'] as const)) {
      const of = (setup: string) => f.summary.find((s) => s.setup === setup && s.operation === operation)!;
      const [memory, one, two, three, toWriter] = [of('memory'), of('postgres x1'), of('postgres x2'), of('postgres x3'), of('postgres x2 to writer')];
      out(
        `  ${operation.padEnd(13)} x1 ÷ memory ${fmt(one.requestsPerSecond / memory.requestsPerSecond)}   x2 ÷ x1 ${fmt(two.requestsPerSecond / one.requestsPerSecond)} (target >= 0.9)   ` +
          `x3 ÷ x1 ${fmt(three.requestsPerSecond / one.requestsPerSecond)}   x2 to the writer ÷ x1 ${fmt(toWriter.requestsPerSecond / one.requestsPerSecond)}   ` +
          `p99 memory ${fmt(memory.p99Ms, 1)} / x1 ${fmt(one.p99Ms, 1)} / x2 ${fmt(two.p99Ms, 1)} / x3 ${fmt(three.p99Ms, 1)} / x2 to the writer ${fmt(toWriter.p99Ms, 1)} ms   ` +
          `commits/request x1 ${commits(one.commitsPerRequest)} / x2 ${commits(two.commitsPerRequest)} / x3 ${commits(three.commitsPerRequest)}   ` +
          `failed ${memory.failed + one.failed + two.failed + three.failed + toWriter.failed} (target 0)`,
      );
    }
    for (const a of f.advance) {
      out(
        `  advance expiring ${a.expiries} (${a.store}, created in ${fmt(a.createMs / 1000, 1)} s): ${fmt(a.advanceMs, 0)} ms; ` +
          `CPU ${a.store === 'memory' ? 'sandbox' : 'writer'} ${fmt(a.sandboxCpuMs, 0)} ms${a.databaseCpuMs === undefined ? '' : `, database ${fmt(a.databaseCpuMs, 0)} ms`}; ` +
          `${a.probe.latencies.length} status checks${a.store === 'memory' ? '' : ' on the other process'}: max ${fmt(a.probe.maxMs, 0)} ms, median ${fmt(a.probe.medianMs, 0)} ms, failed ${a.probe.failed}` +
          `${a.walBytes === undefined ? '' : `; write-ahead log ${fmt(a.walBytes / 1e6, 1)} MB`}; load average ${fmt(a.loadAverage, 2)}`,
      );
    }
    // Every check of every round, per store: the longest, the 99th percentile and the median.
    const pooled = (store: AdvanceFigures['store']) => {
      const of = f.advance.filter((a) => a.store === store);
      const sorted = of.flatMap((a) => a.probe.latencies).sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { advanceMs: of.reduce((sum, a) => sum + a.advanceMs, 0) / of.length, checks: sorted.length, max: at(1), p99: at(0.99), p90: at(0.9), median: at(0.5) };
    };
    const [inMemory, shared] = [pooled('memory'), pooled('postgres x2')];
    out(
      `  over ${f.advance.length / 2} advances each: memory ${inMemory.checks} checks, max ${fmt(inMemory.max, 0)} / p99 ${fmt(inMemory.p99, 0)} / p90 ${fmt(inMemory.p90, 0)} / median ${fmt(inMemory.median, 0)} ms; ` +
        `shared ${shared.checks} checks, max ${fmt(shared.max, 0)} / p99 ${fmt(shared.p99, 0)} / p90 ${fmt(shared.p90, 0)} / median ${fmt(shared.median, 0)} ms`,
    );
    out(
      `  advance shared ÷ memory ${fmt(shared.advanceMs / inMemory.advanceMs, 1)}x   status check during it, shared ÷ memory: ` +
        `max ${fmt(shared.max / inMemory.max, 1)}x (target <= 2)   p99 ${fmt(shared.p99 / inMemory.p99, 1)}x   p90 ${fmt(shared.p90 / inMemory.p90, 1)}x   median ${fmt(shared.median / inMemory.median, 1)}x`,
    );
  }
}
if (only.includes('shared-faults')) {
  const rows = count('rows', values.rows, 1_000_000);
  const cases = values.cases?.split(',').map((s) => s.trim()).filter(Boolean);
  out('\n== Shared sandbox under faults: each case PASS or FAIL, with its figures');
  const results = await benchSharedFaults({ rows, cases, log: out });
  const failed = results.filter((r) => !r.pass);
  out(`\n${results.length - failed.length} of ${results.length} cases passed${failed.length === 0 ? '' : `; FAILED: ${failed.map((r) => r.name).join(', ')}`}.`);
  if (failed.length > 0) process.exitCode = 1;
}
if (only.includes('soak')) {
  const transactions = count('transactions', values.transactions, 1_000_000);
  const timers = count('timers', values.timers, 100_000);
  out(`\n== Soak: ${transactions} transactions over the four families, webhooks to local receivers, ${timers} timers in one advance`);
  out('   (targets: last 10 % within 1.5x of the first 10 % in requests/s and p99; RSS under 500 MB; the advance under 1 s)');
  const sandboxNodeOptions = values['sandbox-node-options']?.split(/\s+/).filter(Boolean) ?? [];
  const f = await benchSoak({ transactions, timers, log: out, sandboxNodeOptions });
  const window = (name: string, w: { requests: number; requestsPerSecond: number; p99Ms: number }) =>
    out(`  ${name.padEnd(10)} ${fmt(w.requestsPerSecond, 0).padStart(7)} req/s   p99 ${fmt(w.p99Ms, 1)} ms   (${w.requests} requests)`);
  out(`  ${f.transactions} transactions, ${f.requests} requests in ${fmt(f.seconds, 0)} s, ${f.failures} not 2xx`);
  window('first 10 %', f.first);
  window('last 10 %', f.last);
  out(`  ratio last/first: throughput ${fmt(f.last.requestsPerSecond / f.first.requestsPerSecond)}   p99 ${fmt(f.last.p99Ms / f.first.p99Ms)}`);
  out(`  webhooks received ${f.webhooksReceived} of ${f.webhooksExpected}`);
  out(`  clock advance firing ${f.advance.timers} timers: ${fmt(f.advance.ms, 0)} ms, ${fmt(f.advance.cpuMs, 0)} ms of the sandbox's CPU (then ${f.advance.webhooks} of their webhooks received; the rest beyond the receiver's backlog limit recorded not_sent)`);
  out(`  sandbox RSS at the end: ${fmt(f.rssEndMb, 0)} MB (before the advance's transactions ${fmt(f.rssBeforeAdvanceMb, 0)} MB; after 10 s idle ${fmt(f.rssIdleMb, 0)} MB)`);
  out(`  memory per transaction (records, delivery, indexes): ${fmt(f.memory.bytesPerTransaction, 0)} bytes`);
}
if (only.includes('attack')) {
  const names = values.attack?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknownAttacks = names?.filter((name) => !(ATTACK_NAMES as readonly string[]).includes(name)) ?? [];
  if (unknownAttacks.length > 0) {
    process.stderr.write(`Unknown attack: ${unknownAttacks.join(', ')} (choose from ${ATTACK_NAMES.join(', ')})\n`);
    process.exit(2);
  }
  out('\n== Attacks: each replayed against a fresh sandbox; peak RSS of the process attacked, longest stall of a probe every 10 ms, held or FAILED');
  const sandboxNodeOptions = values['sandbox-node-options']?.split(/\s+/).filter(Boolean) ?? [];
  const report = await benchAttack({ names: names as AttackName[] | undefined, sandboxFlags: values['sandbox-flags'], sandboxNodeOptions, log: out });
  out('');
  out(report.table);
  if (report.failed > 0) {
    out(`\n${report.failed} of ${report.rows.length} attacks not held.`);
    process.exitCode = 1;
  }
}
