/**
 * Findings 3, 5 and 7: webhook delivery.
 * - webhook-pool: gateway transactions whose webhooks go to 1,100 receivers at distinct ports; each
 *   receiver counts the event ids it answered 200. No event answered 200 may come again; the
 *   sockets the sandbox holds open to them at once, as the kernel sees them (sockets.ts), are
 *   reported and checked against an overall cap when `paylater sandbox --help` documents one
 *   ("... sockets ... (default N)"); the receivers' own count, which sees a close late, is shown too.
 * - first-page: 200,000 webhook events recorded in one clock advance (SDK transactions expiring, no
 *   webhook URL: each is recorded `not_sent`) with `--retain-deliveries 1000`; the unfiltered first
 *   page, read again and again while the sandbox forgets the events beyond its limit, is never empty.
 * - ssrf: loopback written as IPv6 forms at the sandbox's own port, where the sandbox takes a
 *   webhook URL, without `--allow-any-webhook-target`: each must be refused, and no webhook may
 *   confirm the victim transaction the URL's path names.
 */
import { advance, DECLINED, deliveriesSettled, gatewayCreate, merchant, pool, rawSdkInitiate, runId, sdkConfirm, sdkInitiate } from './flows.js';
import { pipelined } from './pipeline.js';
import { drive, request, sleep, waitUntil, type Receiver } from './http.js';
import { SandboxStartFailure } from './processes.js';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { lastLine, type Attack } from './context.js';
import { startSocketWatch } from './sockets.js';
import type { Check } from './verdict.js';

const RECEIVERS = 1_100;
/** Transactions per receiver, one round over all receivers after the other. */
const ROUNDS = 2;
const EVENTS = 200_000;
const CONCURRENCY = 32;

/** The overall socket cap `--help` documents, if any. */
export function documentedSocketCap(help: string): number | undefined {
  for (const line of help.split('\n')) {
    if (!/socket/i.test(line)) continue;
    const match = /default:?\s*([0-9][0-9,_]*)/i.exec(line);
    if (match !== null) return Number(match[1]!.replace(/[,_]/g, ''));
  }
  return undefined;
}

export function webhookPoolAttack(help: string): Attack {
  return {
    finding: '3',
    name: 'webhook-pool',
    title: `${RECEIVERS * ROUNDS} gateway webhooks to ${RECEIVERS} receivers at distinct ports`,
    deadlineSeconds: 120,
    async run(ctx) {
      let open = 0;
      let peak = 0;
      const answered = new Set<string>();
      const seen = new Set<string>();
      let duplicates = 0;
      const receivers: Receiver[] = [];
      for (let start = 0; start < RECEIVERS; start += 100) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(100, RECEIVERS - start) }, () =>
            ctx.receiver({
              onEvent: (id) => {
                if (answered.has(id)) duplicates++;
                seen.add(id);
              },
              onAnswered: (id) => answered.add(id),
              onConnection: (delta) => {
                open += delta;
                peak = Math.max(peak, open);
              },
            }),
          ),
        );
        receivers.push(...batch);
      }
      const sandbox = await ctx.sandbox();
      await ctx.probe(sandbox);
      // The cap is judged on the kernel's count of the sandbox's sockets to the receivers.
      const watch = startSocketWatch(sandbox.child.pid ?? 0, receivers.map((receiver) => receiver.port));
      ctx.defer(() => watch.stop());
      const run = runId('p');
      const auth = await merchant(sandbox.url, receivers[0]!.url, run);
      const agent = pool(CONCURRENCY);
      ctx.defer(() => agent.destroy());
      const refused: string[] = [];
      const total = RECEIVERS * ROUNDS;
      await drive(
        total,
        CONCURRENCY,
        async (index) => {
          const receiver = receivers[index % RECEIVERS]!;
          const reply = await gatewayCreate(sandbox.url, auth, { id: `${run}_${index}`, phone: DECLINED, webhookUrl: receiver.url }, { agent });
          if (reply.status !== 200) refused.push(`${reply.status || reply.error}: ${reply.body.slice(0, 120)}`);
        },
        () => ctx.signal.aborted,
      );
      // The first attempts, then two rounds of retries (30 s and 2 min after a failed attempt).
      await waitUntil(() => deliveriesSettled(sandbox.url), 20_000, 250);
      for (const ms of [31_000, 121_000]) {
        await advance(sandbox.url, ms);
        await sleep(300);
        await waitUntil(() => deliveriesSettled(sandbox.url), 20_000, 250);
      }
      const kernel = await watch.stop();
      const cap = documentedSocketCap(help);
      const sockets =
        `peak ${kernel.peak} sockets open at once${cap === undefined ? ' (no overall cap documented)' : ` (cap ${cap})`}` +
        ` in ${kernel.samples} samples of the sandbox's descriptors; ${peak} as the receivers counted them`;
      const checks: Check[] = [
        { ok: refused.length === 0, reason: `${refused.length} of ${total} transactions refused, first: ${refused[0]}` },
        { ok: duplicates === 0, reason: `${duplicates} events received again after the receiver answered 200 (${seen.size} event ids; ${sockets})` },
        { ok: kernel.samples > 0, reason: 'the sockets of the sandbox could not be read from /proc' },
        { ok: cap === undefined || kernel.peak <= cap, reason: `${sockets}` },
      ];
      return { checks, note: `${seen.size} of ${total} events received, none twice; ${sockets}` };
    },
  };
}

export const firstPageAttack: Attack = {
  finding: '5',
  name: 'first-page',
  title: `${EVENTS} webhook events with --retain-deliveries 1000, the unfiltered first page read while they are forgotten`,
  deadlineSeconds: 150,
  async run(ctx) {
    const sandbox = await ctx.sandbox();
    const run = runId('f');
    let failures = 0;
    let first = '';
    const started = performance.now();
    // SDK transactions left pending (no webhook URL: each expiry is recorded not_sent), then one
    // advance past their 60 s expiry records all the events at once; what lies beyond the retention
    // limit is forgotten after it, a slice at a time, while the first page is read over and over.
    const driven = await pipelined(sandbox.url, EVENTS, (index) => rawSdkInitiate(`${run}_${index}`), {
      onStatus: (index, status, body) => {
        if ((status < 200 || status > 299) && failures++ === 0) first = `${status} ${body.slice(0, 120)}`;
        if ((index + 1) % 50_000 === 0) ctx.log(`    ${index + 1} transactions initiated, ${((performance.now() - started) / 1000).toFixed(0)} s`);
      },
      stop: () => ctx.signal.aborted || !sandbox.alive() || performance.now() - started > 100_000,
    });
    const initiated = (performance.now() - started) / 1000;
    const pages = { read: 0, empty: 0, errors: 0, smallest: Number.POSITIVE_INFINITY };
    let advancing = true;
    const advanced = advance(sandbox.url, 61_000).finally(() => {
      advancing = false;
    });
    // Read pages during the advance and until the history is back at its limit (or 20 s), four
    // readers at once: the sandbox forgets in slices of 10 ms between answers.
    const readUntil = performance.now() + 20_000;
    let pagesAfter = 0;
    const reader = async () => {
      while (performance.now() < readUntil && !ctx.signal.aborted && sandbox.alive()) {
        const page = await request(sandbox.url, 'GET', '/sandbox/webhooks/deliveries', { timeoutMs: 10_000, keepBytes: 2 * 1024 * 1024 });
        pages.read++;
        let count = -1;
        try {
          count = (JSON.parse(page.body) as { deliveries: unknown[] }).deliveries.length;
        } catch {
          pages.errors++;
        }
        if (count === 0) pages.empty++;
        if (count >= 0) pages.smallest = Math.min(pages.smallest, count);
        // Once the advance answered, some more pages show the history during and after its catch-up.
        if (!advancing && ++pagesAfter > 400) break;
      }
    };
    await Promise.all([reader(), reader(), reader(), reader()]);
    const advanceReply = await advanced;
    const checks: Check[] = [
      { ok: failures === 0, reason: `${failures} of ${driven} transactions not initiated, first: ${first}` },
      { ok: driven === EVENTS, reason: `only ${driven} of ${EVENTS} transactions initiated within the time` },
      { ok: advanceReply.status === 200, reason: `the advance answered ${advanceReply.status || advanceReply.error}` },
      { ok: pages.errors === 0, reason: `${pages.errors} of ${pages.read} first pages not answered as JSON` },
      { ok: pages.empty === 0, reason: `${pages.empty} of ${pages.read} unfiltered first pages empty after ${driven} events (retention 1000)` },
    ];
    return {
      checks,
      note: `${driven} events (${initiated.toFixed(0)} s to initiate); ${pages.read} first pages read, the smallest with ${pages.smallest} deliveries`,
    };
  },
};

/**
 * Loopback written in the IPv6 forms a plain check of 127.0.0.0/8 and ::1 misses, at `port`, as
 * the finding gave them (the URL parser shows `[::127.0.0.1]` as `[::7f00:1]`).
 */
export function ssrfForms(port: number, path = '/x'): string[] {
  return [
    `http://[::127.0.0.1]:${port}${path}`,
    `http://[64:ff9b::7f00:1]:${port}${path}`,
    `http://[::ffff:0:7f00:1]:${port}${path}`,
    `http://[::ffff:127.0.0.1]:${port}${path}`,
  ];
}

/** A port free on 127.0.0.1 now (closed again): for a sandbox whose port must be known before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** The status of an SDK transaction (`PENDING`, `SUCCESS`, ...), or what went wrong. */
async function sdkStatus(base: string, id: string): Promise<string> {
  const reply = await request(base, 'GET', `/sandbox/sdk/transactions/${encodeURIComponent(id)}`);
  try {
    return reply.status === 200 ? String((JSON.parse(reply.body) as { status: unknown }).status) : `answered ${reply.status || reply.error}`;
  } catch {
    return `answered ${reply.status} without JSON`;
  }
}

/**
 * What the default targets refuse is the sandbox itself (docs/sandbox.md, "Webhook targets"):
 * loopback at any other port stays allowed, since a developer's receiver is usually on 127.0.0.1,
 * so loopback forms aimed at a receiver on another port prove nothing. Each form is aimed at the
 * sandbox's own port and at its `confirm` endpoint of a victim SDK transaction, the harm the rule
 * prevents: a webhook that reached the sandbox would confirm the victim.
 */
export const ssrfAttack: Attack = {
  finding: '7',
  name: 'ssrf',
  title: "loopback as ::127.0.0.1, 64:ff9b::7f00:1, ::ffff:0:7f00:1, ::ffff:127.0.0.1 at the sandbox's own port as webhook URLs (default targets)",
  deadlineSeconds: 90,
  async run(ctx) {
    const host = (form: string) => new URL(form).hostname;
    const victimPath = (id: string) => `/sandbox/sdk/transactions/${id}/confirm`;
    const accepted: string[] = [];
    const confirmed: string[] = [];
    const notRefused: string[] = [];
    // 1. The start flag, at the port the sandbox is told to listen on: a sandbox that starts took
    //    the URL; a transaction confirmed then sends the partner webhook to the victim's confirm.
    const forms = ssrfForms(0);
    for (const [index, form] of forms.entries()) {
      const port = await freePort();
      const victim = runId(`v${index}`);
      const url = ssrfForms(port, victimPath(victim))[index]!;
      try {
        const sandbox = await ctx.sandbox(['--port', String(port), '--webhook-url', url], { expectExit: true });
        accepted.push(`--webhook-url ${host(form)}`);
        await sdkInitiate(sandbox.url, victim);
        const id = runId('s');
        await sdkInitiate(sandbox.url, id);
        await sdkConfirm(sandbox.url, id);
        await sleep(500);
        const status = await sdkStatus(sandbox.url, victim);
        if (status !== 'PENDING') confirmed.push(`${host(form)} (start flag): victim ${status}`);
        await sandbox.stop();
      } catch (error) {
        if (!(error instanceof SandboxStartFailure)) throw error;
        // Refused for the URL, not for anything else (a flag, a port taken meanwhile).
        if (!/webhook URL points at the sandbox itself/.test(error.output)) notRefused.push(`--webhook-url ${host(form)}: ${lastLine(error.output)}`);
      }
    }
    // 2. A merchant's default webhook URL, and a transaction's createConfiguration.webhookUrl (a
    //    risk-declined user: its webhook is sent at once), each at a victim of its own.
    const sandbox = await ctx.sandbox();
    const own = Number(new URL(sandbox.url).port);
    const run = runId('s');
    const auth = await merchant(sandbox.url, undefined, run);
    const victims: { id: string; where: string }[] = [];
    for (const [index, form] of forms.entries()) {
      const forMerchant = runId(`vm${index}`);
      const forTransaction = runId(`vt${index}`);
      await sdkInitiate(sandbox.url, forMerchant);
      await sdkInitiate(sandbox.url, forTransaction);
      victims.push({ id: forMerchant, where: `${host(form)} (merchant default)` }, { id: forTransaction, where: `${host(form)} (transaction)` });
      // Onboarded with the URL as its default: refused at the first step, or enabled, and then a
      // transaction without a URL of its own sends its webhook to the default.
      try {
        const merchantAuth = await merchant(sandbox.url, ssrfForms(own, victimPath(forMerchant))[index]!, `${run}_m${index}`);
        accepted.push(`defaultWebhookUrl ${host(form)}`);
        await gatewayCreate(sandbox.url, merchantAuth, { id: `${run}_d${index}`, phone: DECLINED });
      } catch (error) {
        if (!/answered 4[0-9][0-9]/.test(error instanceof Error ? error.message : '')) throw error;
      }
      const webhookUrl = ssrfForms(own, victimPath(forTransaction))[index]!;
      const transaction = await gatewayCreate(sandbox.url, auth, { id: `${run}_t${index}`, phone: DECLINED, webhookUrl });
      if (transaction.status < 400) accepted.push(`createConfiguration.webhookUrl ${host(form)} (${transaction.status})`);
    }
    await sleep(1_500);
    for (const { id, where } of victims) {
      const status = await sdkStatus(sandbox.url, id);
      if (status !== 'PENDING') confirmed.push(`${where}: victim ${status}`);
    }
    const checks: Check[] = [
      { ok: accepted.length === 0, reason: `${accepted.length} of ${forms.length * 3} accepted, e.g. ${accepted.slice(0, 2).join(', ')}` },
      { ok: notRefused.length === 0, reason: `${notRefused.length} sandboxes did not start for another reason, e.g. ${notRefused[0]}` },
      { ok: confirmed.length === 0, reason: `${confirmed.length} webhooks reached the sandbox, e.g. ${confirmed.slice(0, 2).join(', ')}` },
    ];
    return { checks, note: `${forms.length * 3} URLs at the sandbox's own port refused (start flag, merchant default, transaction); ${victims.length + forms.length} victims still PENDING` };
  },
};
