/**
 * `npm run bench`: every figure is a ratio taken side by side in one run, because the machines
 * are shared and noisy. `--only signatures,clients,size,sandbox` runs a subset.
 */
import { parseArgs } from 'node:util';
import { benchClients } from './client.js';
import { benchSandbox } from './sandbox.js';
import { benchSignatures } from './signatures.js';
import { benchSizes } from './size.js';

const ALL = ['signatures', 'clients', 'size', 'sandbox'] as const;
const { values } = parseArgs({ options: { only: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  process.stdout.write(`Usage: npm run bench [-- --only ${ALL.join(',')}]\n`);
  process.exit(0);
}
const only = values.only?.split(',').map((s) => s.trim()) ?? [...ALL];
const unknown = only.filter((name) => !(ALL as readonly string[]).includes(name));
if (unknown.length > 0) {
  process.stderr.write(`Unknown benchmark: ${unknown.join(', ')} (choose from ${ALL.join(', ')})\n`);
  process.exit(2);
}

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
  out('\n== Sandbox vs Prism mock: autocannon, 20 connections, same operations, same run (target ratio >= 10, sandbox p99 <= 5 ms)');
  const { rows, ratios } = await benchSandbox();
  for (const r of rows) {
    out(`  ${r.operation.padEnd(16)} ${r.server.padEnd(8)} ${fmt(r.requestsPerSecond, 0).padStart(7)} req/s   p99 ${fmt(r.p99Ms, 1)} ms   non-2xx ${r.non2xx}   errors ${r.errors}`);
  }
  for (const r of ratios) out(`  ${r.operation.padEnd(16)} sandbox ÷ prism ${fmt(r.ratio, 1)}x   sandbox p99 ${fmt(r.sandboxP99Ms, 1)} ms`);
}
