/**
 * The dashboard's calls to the sandbox (see ../dashboard.ts) and the credential they carry.
 *
 * On loopback the sandbox is open and the page sends no credential. Hosted, every `/sandbox/`
 * endpoint wants one (src/sandbox/access.ts), so the page asks for it once (D282) and sends it with
 * every read, control and the live stream, as a script would:
 * - the operator's token: `Authorization: Bearer`; given in the form, or in the link
 *   `/dashboard#token=...` (a fragment: never sent to the server, nor logged), which the page takes
 *   out of the address bar;
 * - a partner's id and private key: `X-Partner-Id` and `X-Signature`, the web flow's request
 *   signature base64(SHA-256(body + path and query + private key)), computed in the page with the
 *   browser's Web Crypto (browsers give it to https:// and loopback pages only); the key itself is
 *   never sent;
 * - HTTP Basic credentials: a merchant's Transactional API credentials, the gateway's Merchant API
 *   credentials or the extras credentials.
 * The credential stays in the page's memory: a reload asks again. The curl lines shown name the
 * credential with shell variables, never its value.
 */
import { h, pre, statusClass, byId, type Json } from './dom.js';

export type Credential =
  | { readonly kind: 'none' }
  | { readonly kind: 'operator'; readonly token: string }
  | { readonly kind: 'partner'; readonly id: string; readonly key: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string };

let credential: Credential = { kind: 'none' };

/** What the page does after a control ran (the live refresh, set by ../dashboard.ts). */
export const hooks = { afterAct: (): void => undefined };

export function useCredential(next: Credential): void {
  credential = next;
}

function base64(bytes: ArrayBuffer | Uint8Array): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The headers that carry the credential for a call of `pathAndQuery` with `body`. */
async function credentialHeaders(pathAndQuery: string, body: string): Promise<Record<string, string>> {
  switch (credential.kind) {
    case 'none':
      return {};
    case 'operator':
      return { Authorization: `Bearer ${credential.token}` };
    case 'basic':
      return { Authorization: `Basic ${base64(new TextEncoder().encode(`${credential.username}:${credential.password}`))}` };
    case 'partner': {
      if (globalThis.crypto?.subtle === undefined) {
        throw new Error('this browser gives Web Crypto only to https:// and loopback pages: open the sandbox over https to sign as a partner');
      }
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body + pathAndQuery + credential.key));
      return { 'X-Partner-Id': credential.id, 'X-Signature': base64(digest) };
    }
  }
}

/** A read of the page: marked so that the request log leaves it out, with the credential. */
export async function read(path: string): Promise<Json> {
  const response = await fetch(path, { headers: { 'X-Sandbox-Dashboard': 'read', ...(await credentialHeaders(path, '')) } });
  const body = (await response.json().catch(() => ({}))) as Json;
  if (!response.ok) throw new CallError(response.status, `${response.status}: ${String(body.message ?? body.errorCode ?? 'failed')}`);
  return body;
}

export class CallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The curl line of a call, as a person would type it; the credential by shell variables. */
export function curlLine(method: string, path: string, body?: unknown): string {
  const parts = ['curl -s', ...(method === 'GET' ? [] : ['-X', method]), shellQuote(`${location.origin}${path}`)];
  if (credential.kind === 'operator') parts.push(`-H "Authorization: Bearer $OPERATOR_TOKEN"`);
  if (credential.kind === 'basic') parts.push(`-u "$USERNAME:$PASSWORD"`);
  if (credential.kind === 'partner') parts.push('-H', shellQuote(`X-Partner-Id: ${credential.id}`), `-H "X-Signature: $SIGNATURE"`);
  if (body !== undefined) parts.push("-H 'Content-Type: application/json' -d", shellQuote(JSON.stringify(body)));
  return parts.join(' ');
}

/** Runs a control: the call, its curl line and its answer shown in the result area. */
export async function act(method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const result = byId<HTMLDivElement>('control-result');
  const text = body === undefined ? '' : JSON.stringify(body);
  let answer: Json | undefined;
  let status = 0;
  try {
    const headers: Record<string, string> = { ...(await credentialHeaders(path, text)) };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: text }) });
    status = response.status;
    answer = (await response.json().catch(() => undefined)) as Json | undefined;
  } catch (error) {
    answer = { error: String(error) };
  }
  result.replaceChildren(
    h('p', {}, h('strong', { class: statusClass(status) }, `${method} ${path} → ${status || 'no answer'}`)),
    h('p', {}, 'The call: ', h('code', {}, curlLine(method, path, body))),
    pre(JSON.stringify(answer ?? null, null, 2), 'The answer'),
  );
  hooks.afterAct();
  return status >= 200 && status < 300 ? answer : undefined;
}

/**
 * Follows `GET /sandbox/webhooks/stream`: with an EventSource when the page sends no credential,
 * else with fetch, which can send headers (an EventSource cannot), reading the events itself and
 * connecting again a second after the stream ends.
 */
export function followStream(onDelivery: (delivery: Json) => void, onState: (text: string) => void): void {
  if (credential.kind === 'none') {
    const stream = new EventSource('/sandbox/webhooks/stream');
    stream.addEventListener('open', () => onState('live'));
    stream.addEventListener('error', () => onState('reconnecting…'));
    stream.addEventListener('delivery', (event) => onDelivery(JSON.parse((event as MessageEvent<string>).data) as Json));
    return;
  }
  const path = '/sandbox/webhooks/stream';
  const connect = async (): Promise<void> => {
    try {
      const response = await fetch(path, { headers: { Accept: 'text/event-stream', ...(await credentialHeaders(path, '')) } });
      if (!response.ok || response.body === null) throw new Error(String(response.status));
      onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        buffered += part.value;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const lines = buffered.slice(0, end).split('\n');
          buffered = buffered.slice(end + 2);
          const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
          const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice('data: '.length)).join('\n');
          if (event === 'delivery') onDelivery(JSON.parse(data) as Json);
        }
      }
    } catch {
      // Connected again below.
    }
    onState('reconnecting…');
    setTimeout(() => void connect(), 1000);
  };
  void connect();
}
