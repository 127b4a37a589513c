/**
 * Finding 4: secrets shown. A partner webhook URL with a token in its path and its query, a
 * delivery to it that succeeds and one that is refused until it is abandoned (the receiver down),
 * an SDK call whose partner id is a pasted key, and a dashboard invitation read at a path with a
 * double slash. None of the secrets may appear in what the sandbox prints (banner, request lines,
 * warnings) or in any answer but the one that hands out the invitation.
 */
import { advance, MERCHANT_API, runId, sdkConfirm, sdkInitiate } from './flows.js';
import { request, sleep, waitUntil, type Reply } from './http.js';
import type { Attack } from './context.js';

const PATH_TOKEN = 'SECRET123';
const QUERY_TOKEN = 'SECRET456';
const PASTED_KEY = 'PASTEDKEY';

/** Where each secret was seen: `secret -> places`. */
export function secretsShown(secrets: readonly string[], places: ReadonlyMap<string, string>): Map<string, string[]> {
  const shown = new Map<string, string[]>();
  for (const secret of secrets) {
    for (const [place, text] of places) {
      if (!text.includes(secret)) continue;
      shown.set(secret, [...(shown.get(secret) ?? []), place]);
    }
  }
  return shown;
}

/** An answer as one text: status, headers and body. */
const answerText = (reply: Reply) => `${reply.status}\n${JSON.stringify(reply.headers)}\n${reply.body}`;

export const tokensAttack: Attack = {
  finding: '4',
  name: 'tokens',
  title: 'tokens in a webhook URL, a pasted key as partner id, an invitation token at a //path: never shown',
  deadlineSeconds: 60,
  async run(ctx) {
    const receiver = await ctx.receiver({ path: `/hooks/tok_${PATH_TOKEN}?key=${QUERY_TOKEN}` });
    const sandbox = await ctx.sandbox(['--webhook-url', receiver.url]);
    const places = new Map<string, string>();
    const run = runId('k');

    // A delivery the receiver answers.
    await sdkInitiate(sandbox.url, `${run}_ok`);
    await sdkConfirm(sandbox.url, `${run}_ok`);
    await waitUntil(() => receiver.requests >= 1, 5_000);
    // The receiver down: one delivery refused at every attempt until it is abandoned (6 attempts).
    await receiver.close();
    await sdkInitiate(sandbox.url, `${run}_down`);
    await sdkConfirm(sandbox.url, `${run}_down`);
    for (const ms of [31_000, 121_000, 601_000, 3_601_000, 21_601_000]) {
      await sleep(400);
      await advance(sandbox.url, ms);
    }
    await sleep(600);

    places.set('deliveries list', answerText(await request(sandbox.url, 'GET', '/sandbox/webhooks/deliveries')));
    places.set(
      'deliveries of the transaction',
      answerText(await request(sandbox.url, 'GET', `/sandbox/webhooks/deliveries?transactionId=${run}_down`)),
    );
    places.set('401 answer', answerText(await sdkInitiate(sandbox.url, `${run}_key`, {}, `sk_live_${PASTED_KEY}`)));

    // An invitation: its token is in the answer that creates it (that one is not searched).
    const merchantId = `${run}_m`;
    await request(sandbox.url, 'POST', '/api/merchant', {
      headers: { Authorization: MERCHANT_API },
      body: JSON.stringify({ merchant: { id: merchantId, brandName: 'Attack', entityName: 'Attack Pvt Ltd', brandHomePageUrl: 'https://attack.example.in', mccCode: 5812 } }),
    });
    const invited = await request(sandbox.url, 'POST', `/api/merchant/${merchantId}/dashboard-access`, {
      headers: { Authorization: MERCHANT_API },
      body: JSON.stringify({ dashboardUser: { name: 'Attack Person', email: 'person@attack.example.in' } }),
    });
    const token = /\/invitations\/([^"/?\s]+)/.exec(invited.body)?.[1];
    if (token !== undefined) {
      places.set('// answer', answerText(await request(sandbox.url, 'GET', `//sandbox/gateway/dashboard/invitations/${token}`)));
    }
    await sleep(300);
    await sandbox.stop();
    // The banner ends with its Ctrl+C line; the log lines follow.
    const output = sandbox.output();
    const bannerEnd = output.indexOf('Press Ctrl+C');
    places.set('banner', bannerEnd < 0 ? '' : output.slice(0, bannerEnd));
    places.set('log', bannerEnd < 0 ? output : output.slice(bannerEnd));

    const secrets = [PATH_TOKEN, QUERY_TOKEN, PASTED_KEY, ...(token === undefined ? [] : [token])];
    const shown = secretsShown(secrets, places);
    const name = (secret: string) => (secret === token ? 'the invitation token' : secret);
    const listed = [...shown].map(([secret, where]) => `${name(secret)} (${where.join(', ')})`);
    return {
      checks: [
        { ok: token !== undefined, reason: `no invitation was created (${invited.status}): ${invited.body.slice(0, 120)}` },
        { ok: receiver.requests >= 1, reason: 'the receiver got no webhook before it was stopped' },
        { ok: shown.size === 0, reason: `shown: ${listed.join(', ')}` },
      ],
      note: `${secrets.length} secrets, none in the banner, the log or ${places.size - 2} answers`,
    };
  },
};
