/**
 * Findings 1 and 2: small bodies that become big in memory. A 1 MiB body of empty objects
 * (`{"a":[{},{},...]}`) is some 350,000 objects once parsed, and kept as the notes of a transaction
 * or as a data push it holds tens of MB; reading many back builds answers of the same size. Every
 * case is held to the stall budget (settings.ts): the initiates, the pushes and the read-backs.
 */
import { answerProblem, BODY_LIMIT, EXTRAS, emptyObjects, gatewayCreate, merchant, pool, runId, webInitiate } from './flows.js';
import { drive, request, type Reply } from './http.js';
import { BOUNDS } from './settings.js';
import type { Attack } from './context.js';
import type { Check } from './verdict.js';

const WEB_INITIATES = 200;
const GATEWAY_TRANSACTIONS = 100;
const PUSHES = 70;
const READS_AT_ONCE = 25;
/** The first transactions of the notes attack read back, each with its ~1 MiB of notes. */
const READ_BACKS = 60;

/** Room for the rest of a body around the notes. */
const ENVELOPE = 512;

export const notesAttack: Attack = {
  finding: '1',
  name: 'notes',
  title: `${WEB_INITIATES} web initiates and ${GATEWAY_TRANSACTIONS} gateway transactions, each with ~1 MiB of {"a":[{},...]} notes, then ${READ_BACKS} read back`,
  // The read-backs, and the worker's parse on a shared machine, take longer than the initiates did.
  deadlineSeconds: 300,
  async run(ctx) {
    const hook = await ctx.receiver();
    const sandbox = await ctx.sandbox();
    await ctx.probe(sandbox);
    const run = runId('n');
    const auth = await merchant(sandbox.url, hook.url, run);
    const notes = emptyObjects(BODY_LIMIT - ENVELOPE, 'object');
    const agent = pool(4);
    ctx.defer(() => agent.destroy());
    // Two web initiates, then one gateway transaction, and so on.
    const total = WEB_INITIATES + GATEWAY_TRANSACTIONS;
    const problems: string[] = [];
    let accepted = 0;
    let refused = 0;
    const sent = await drive(
      total,
      4,
      async (index) => {
        const gateway = index % 3 === 2 && Math.floor(index / 3) < GATEWAY_TRANSACTIONS;
        const id = `${run}_${index}`;
        const reply: Reply = gateway
          ? await gatewayCreate(sandbox.url, auth, { id, phone: '+919000000001', notes }, { agent, timeoutMs: 30_000, keepBytes: 4096 })
          : await webInitiate(sandbox.url, id, notes, { agent, timeoutMs: 30_000, keepBytes: 4096 });
        const problem = answerProblem(reply, gateway ? 'apiError' : 'messageError');
        if (problem !== undefined) problems.push(`${gateway ? 'gateway' : 'web'} #${index} ${problem}`);
        else if (reply.status < 300) accepted++;
        else refused++;
      },
      () => ctx.signal.aborted || !sandbox.alive() || problems.length >= 20,
    );
    // The read-backs: each accepted transaction's ~1 MiB of notes written into an answer again,
    // the web ones by the hosted page's read, the gateway ones by the Transactional API's.
    let readBack = 0;
    let readBytes = 0;
    const unread: string[] = [];
    await drive(
      Math.min(sent, READ_BACKS),
      2,
      async (index) => {
        const gateway = index % 3 === 2 && Math.floor(index / 3) < GATEWAY_TRANSACTIONS;
        const id = encodeURIComponent(`${run}_${index}`);
        const reply = gateway
          ? await request(sandbox.url, 'GET', `/api/merchant/transaction/${id}`, { headers: { Authorization: auth }, agent, timeoutMs: 30_000, keepBytes: 0 })
          : await request(sandbox.url, 'GET', `/sandbox/web/transactions/${id}`, { agent, timeoutMs: 30_000, keepBytes: 0 });
        if (reply.status === 200) {
          readBack++;
          readBytes += reply.bytes;
        } else if (reply.status !== 404) unread.push(`${gateway ? 'gateway' : 'web'} #${index}: ${reply.status || reply.error}`);
      },
      () => ctx.signal.aborted || !sandbox.alive(),
    );
    const checks: Check[] = [
      { ok: problems.length === 0, reason: `${problems.length}${problems.length >= 20 ? '+' : ''} of ${sent} requests not answered properly, first: ${problems[0]}` },
      { ok: sent === total, reason: `stopped after ${sent} of ${total} requests` },
      { ok: unread.length === 0, reason: `${unread.length} read-backs not answered, first: ${unread[0]}` },
    ];
    return {
      checks,
      note: `${total} requests of ~1 MiB: ${accepted} accepted, ${refused} refused with a 4xx; ${readBack} read back (${mb(readBytes)})`,
    };
  },
};

export const extrasAttack: Attack = {
  finding: '2',
  name: 'extras',
  title: `${PUSHES} data pushes of ~1 MiB of [{},...], then reads of limit=1000 (one, then ${READS_AT_ONCE} at once)`,
  deadlineSeconds: 120,
  async run(ctx) {
    const sandbox = await ctx.sandbox();
    await ctx.probe(sandbox);
    const phone = '+919812345678';
    const prefix = `{"userPhoneNumber":"${phone}","data":`;
    const body = `${prefix}${emptyObjects(BODY_LIMIT - prefix.length - 64, 'array')}}`;
    const agent = pool(2);
    ctx.defer(() => agent.destroy());
    const problems: string[] = [];
    const sent = await drive(
      PUSHES,
      2,
      async (index) => {
        const reply = await request(sandbox.url, 'POST', '/service/database/merchant/user/feed/merchant-data', {
          headers: { Authorization: EXTRAS },
          body,
          agent,
          timeoutMs: 30_000,
          keepBytes: 4096,
        });
        const problem = answerProblem(reply, 'apiError');
        if (problem !== undefined) problems.push(`push #${index} ${problem}`);
      },
      () => ctx.signal.aborted || !sandbox.alive(),
    );
    const path = `/sandbox/extras/users/${encodeURIComponent(phone)}?limit=1000`;
    // Answers are read to their end but not kept: 25 of them may be GBs.
    const read = () => request(sandbox.url, 'GET', path, { timeoutMs: 30_000, keepBytes: 0 });
    const one = await read();
    const many = await Promise.all(Array.from({ length: READS_AT_ONCE }, read));
    const bound = BOUNDS.extras.readMs;
    const slowest = Math.max(...many.map((reply) => reply.ms));
    const unanswered = [one, ...many].filter((reply) => reply.status === 0 || reply.status >= 500);
    const checks: Check[] = [
      { ok: problems.length === 0, reason: `${problems.length} of ${sent} pushes not answered properly, first: ${problems[0]}` },
      { ok: unanswered.length === 0, reason: `${unanswered.length} of ${READS_AT_ONCE + 1} reads not answered (${unanswered[0]?.error ?? unanswered[0]?.status})` },
      { ok: one.ms < bound, reason: `one read took ${Math.round(one.ms)} ms (bound ${bound} ms; ${mb(one.bytes)})` },
      { ok: slowest < bound, reason: `${READS_AT_ONCE} reads at once: the slowest took ${Math.round(slowest)} ms (bound ${bound} ms; ${mb(many[0]?.bytes ?? 0)} each)` },
    ];
    return { checks, note: `${sent} pushes; one read ${Math.round(one.ms)} ms (${mb(one.bytes)}), ${READS_AT_ONCE} at once ${Math.round(slowest)} ms` };
  },
};

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
