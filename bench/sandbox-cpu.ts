/**
 * `npx tsx bench/sandbox-cpu.ts --before DIR [--operation clock,read,initiate] [--requests N] [--rounds N]`:
 * the CPU time a request costs the sandbox, this tree's against another checkout's (DIR, its
 * `node_modules` in place), both built and run as `npm start` runs them, side by side. Each round
 * sends the same fixed number of requests (autocannon, 20 connections) to one sandbox and then to
 * the other (the order reversed every round) and divides each process's CPU time (user + system,
 * /proc/<pid>/stat) by the requests; the figure is the median over the rounds, and the change the
 * median of the per-round ratios. On a machine shared with other work the rates move with the
 * load far more than the CPU a request costs, so this is the figure to compare two trees by when
 * the machine is not quiet (bench/sandbox.ts measures the rates and the ratios to a bare server).
 * After each load of initiates, that sandbox's clock is moved past their expiry and it is given
 * time to trim them (bench/sandbox.ts), outside the CPU measured: a sandbox holds at most 200,000
 * pending transactions, which ten rounds of 20,000 initiates would otherwise reach.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuMs, median } from './measure.js';
import { buildTree, expireInitiates, freePorts, SDK_INITIATE_REQUEST, sandboxTransaction, startSandbox, waitFor } from './sandbox.js';

const OPERATIONS = ['clock', 'read', 'initiate'] as const;
type Operation = (typeof OPERATIONS)[number];

const { values } = parseArgs({
  options: { before: { type: 'string' }, operation: { type: 'string' }, requests: { type: 'string' }, rounds: { type: 'string' } },
});
if (values.before === undefined) {
  process.stderr.write('Usage: npx tsx bench/sandbox-cpu.ts --before DIR [--operation clock,read,initiate] [--requests N] [--rounds N]\n');
  process.exit(2);
}
const operations = (values.operation?.split(',').map((name) => name.trim()) ?? [...OPERATIONS]) as Operation[];
const requests = Number(values.requests ?? 20_000);
const rounds = Number(values.rounds ?? 5);
const trees = { after: resolve(import.meta.dirname, '..'), before: resolve(values.before) };

await buildTree(trees.after);
await buildTree(trees.before);
const [afterPort, beforePort] = await freePorts(2);
const children = { after: startSandbox(afterPort!, trees.after), before: startSandbox(beforePort!, trees.before) };
const urls = { after: `http://127.0.0.1:${afterPort!}`, before: `http://127.0.0.1:${beforePort!}` };
try {
  await waitFor(`${urls.after}/sandbox/clock`, children.after);
  await waitFor(`${urls.before}/sandbox/clock`, children.before);
  const reads = { after: await sandboxTransaction(urls.after), before: await sandboxTransaction(urls.before) };
  const optionsOf = (tree: 'after' | 'before', operation: Operation): Parameters<typeof autocannon>[0] => {
    if (operation === 'clock') return { url: `${urls[tree]}/sandbox/clock` };
    if (operation === 'read') return { url: `${urls[tree]}${reads[tree].path}`, headers: { Authorization: reads[tree].authorization } };
    return { url: urls[tree], requests: [SDK_INITIATE_REQUEST] };
  };
  process.stdout.write('| operation | before, µs a request | after | after ÷ before (median of rounds) | req/s before, after (medians) |\n|---|---|---|---|---|\n');
  for (const operation of operations) {
    const figures = { after: [] as number[], before: [] as number[] };
    const rates = { after: [] as number[], before: [] as number[] };
    const ratios: number[] = [];
    const settle = async (tree: 'after' | 'before') => {
      if (operation === 'initiate') await expireInitiates(urls[tree]);
    };
    for (const tree of ['after', 'before'] as const) {
      await autocannon({ ...optionsOf(tree, operation), connections: 20, duration: 2 });
      await settle(tree);
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['after', 'before'] as const) : (['before', 'after'] as const);
      for (const tree of order) {
        const pid = children[tree].pid!;
        const start = cpuMs(pid);
        const result = await autocannon({ ...optionsOf(tree, operation), connections: 20, amount: requests });
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${operation} on ${tree}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
        figures[tree].push(((cpuMs(pid) - start) * 1000) / result.requests.total);
        rates[tree].push(result.requests.average);
        await settle(tree);
      }
      ratios.push(figures.after.at(-1)! / figures.before.at(-1)!);
    }
    const fmt = (n: number) => n.toFixed(1);
    process.stdout.write(
      `| ${operation} | ${fmt(median(figures.before))} | ${fmt(median(figures.after))} | ${median(ratios).toFixed(3)} | ${median(rates.before).toFixed(0)}, ${median(rates.after).toFixed(0)} |\n`,
    );
  }
} finally {
  children.after.kill('SIGTERM');
  children.before.kill('SIGTERM');
}
