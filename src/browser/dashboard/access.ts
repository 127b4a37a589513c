/**
 * Signing in to a hosted sandbox's dashboard (D282; the credential itself: calls.ts). On loopback
 * the first read answers and nothing is asked. Hosted, the first read answers 401: the page shows
 * its sign-in form and starts once a read with the credential given answers. An operator's link
 * `/dashboard#token=...` signs in at once.
 */
import { CallError, read, useCredential, type Credential } from './calls.js';
import { byId } from './dom.js';

/** Resolves once the page may read the sandbox: at once when open, else after a sign-in. */
export async function signedIn(): Promise<void> {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (token !== null && token !== '') {
    useCredential({ kind: 'operator', token });
    // Out of the address bar and the history: the token is not left for the next person.
    history.replaceState(null, '', location.pathname + location.search);
  }
  if (await readable()) {
    showWho(token === null ? undefined : 'the operator');
    return;
  }
  useCredential({ kind: 'none' });
  const section = byId<HTMLElement>('access');
  const form = byId<HTMLFormElement>('access-form');
  const note = byId<HTMLParagraphElement>('access-note');
  section.hidden = false;
  await new Promise<void>((resolve) => {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const given = credentialOf(new FormData(form));
      if (typeof given === 'string') {
        note.textContent = given;
        return;
      }
      if (given.kind === 'partner' && globalThis.crypto?.subtle === undefined) {
        note.textContent = 'This browser gives Web Crypto, with which the page signs as a partner, only to https:// and loopback pages: open this sandbox over HTTPS.';
        return;
      }
      useCredential(given);
      void readable().then((ok) => {
        if (!ok) {
          useCredential({ kind: 'none' });
          note.textContent = 'The sandbox did not accept this credential: check it (the partner id and its private key, the Basic username and password, or the operator token printed at start).';
          return;
        }
        section.hidden = true;
        showWho(given.kind === 'partner' ? `partner ${given.id}` : given.kind === 'basic' ? given.username : 'the operator');
        resolve();
      });
    });
  });
}

/** Whether a read with the credential in use is let in: false for a 401 only. */
async function readable(): Promise<boolean> {
  try {
    await read('/sandbox/clock');
    return true;
  } catch (error) {
    // Only a 401 asks for a credential; any other failure shows in the lists as it comes.
    return !(error instanceof CallError) || error.status !== 401;
  }
}

function credentialOf(data: FormData): Credential | string {
  const value = (name: string) => String(data.get(name) ?? '').trim();
  switch (value('kind')) {
    case 'partner':
      return value('partnerId') === '' || value('privateKey') === '' ? 'Give the partner id and its private key.' : { kind: 'partner', id: value('partnerId'), key: value('privateKey') };
    case 'basic':
      return value('username') === '' ? 'Give the username and password.' : { kind: 'basic', username: value('username'), password: value('password') };
    default:
      return value('token') === '' ? 'Give the operator token.' : { kind: 'operator', token: value('token') };
  }
}

function showWho(who: string | undefined): void {
  if (who !== undefined) byId<HTMLSpanElement>('who').textContent = ` · signed in as ${who} (a reload signs out)`;
}
