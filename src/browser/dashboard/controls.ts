/**
 * The dashboard's controls (see ../dashboard.ts): advance the clock; confirm, fail or cancel a
 * pending SDK or web transaction; expire one (the clock advanced past its `expiresAt`); verify a
 * merchant. Each shows the curl line of the call it makes, to script it.
 */
import { act, curlLine, read } from './calls.js';
import { button, byId, h, type Json } from './dom.js';
import { expire, statePath } from './transactions.js';

function field(label: string, input: HTMLInputElement | HTMLSelectElement): HTMLLabelElement {
  return h('label', {}, `${label} `, input);
}

export function controlPanel(): void {
  const panel = byId<HTMLDivElement>('control-panel');

  const ms = h('input', { type: 'number', min: '0', step: '1000', value: '60000', size: '10' });
  const advanceCode = h('code');
  const advanceBody = () => ({ ms: Number(ms.value) });
  const showAdvance = () => (advanceCode.textContent = curlLine('POST', '/sandbox/clock/advance', advanceBody()));
  ms.addEventListener('input', showAdvance);
  showAdvance();

  const family = h('select', {}, h('option', {}, 'sdk'), h('option', {}, 'web'));
  const id = h('input', { size: '22' });
  const actionCodes = ['confirm', 'fail', 'cancel'].map((action) => [action, h('code')] as const);
  const showActions = () => {
    for (const [action, code] of actionCodes) code.textContent = curlLine('POST', `/sandbox/${family.value}/transactions/${id.value === '' ? '<id>' : encodeURIComponent(id.value)}/${action}`);
  };
  family.addEventListener('change', showActions);
  id.addEventListener('input', showActions);
  showActions();

  const expireFamily = h('select', {}, h('option', {}, 'sdk'), h('option', {}, 'web'), h('option', {}, 'gateway'));
  const expireId = h('input', { size: '22' });
  const expireMerchant = h('input', { size: '14' });

  const merchant = h('input', { size: '16' });
  const outcome = h('select', {}, h('option', { value: '' }, 'by the rule (Reject in the name fails)'), h('option', {}, 'pass'), h('option', {}, 'reject'));
  const verifyCode = h('code');
  const verifyBody = () => (outcome.value === '' ? undefined : { outcome: outcome.value });
  const verifyPath = () => `/sandbox/gateway/merchants/${merchant.value === '' ? '<id>' : encodeURIComponent(merchant.value)}/verify`;
  const showVerify = () => (verifyCode.textContent = curlLine('POST', verifyPath(), verifyBody()));
  merchant.addEventListener('input', showVerify);
  outcome.addEventListener('change', showVerify);
  showVerify();

  panel.replaceChildren(
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-clock' },
      h('h3', { id: 'control-clock' }, 'Advance the clock'),
      field('Milliseconds', ms),
      button('Advance', () => void act('POST', '/sandbox/clock/advance', advanceBody())),
      ...[
        ['1 min', 60_000],
        ['15 min', 900_000],
        ['1 h', 3_600_000],
      ].map(([label, value]) => button(`+${label}`, () => void act('POST', '/sandbox/clock/advance', { ms: value }))),
      h('br'),
      advanceCode,
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-user' },
      h('h3', { id: 'control-user' }, "A pending transaction: the user's answer"),
      field('Flow', family),
      field('Transaction id', id),
      h('br'),
      ...actionCodes.flatMap(([action, code]) => [
        button(action[0]!.toUpperCase() + action.slice(1), () => void act('POST', `/sandbox/${family.value}/transactions/${encodeURIComponent(id.value)}/${action}`)),
        code,
        h('br'),
      ]),
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-expire' },
      h('h3', { id: 'control-expire' }, 'Expire a pending transaction (advances the clock past its expiry)'),
      field('Family', expireFamily),
      field('Transaction id', expireId),
      field('Merchant (gateway)', expireMerchant),
      button('Expire', () => {
        const ref = { family: expireFamily.value, id: expireId.value, merchantId: expireMerchant.value };
        void read(statePath(ref)).then(
          (state) => expire(((state.transaction ?? state) as Json).expiresAt as string),
          (error: unknown) => (byId<HTMLDivElement>('control-result').textContent = `Not found: ${String(error)}`),
        );
      }),
    ),
    h(
      'div',
      { class: 'control', role: 'group', 'aria-labelledby': 'control-verify' },
      h('h3', { id: 'control-verify' }, 'Verify a merchant now'),
      field('Merchant id', merchant),
      field('Outcome', outcome),
      button('Verify', () => void act('POST', verifyPath(), verifyBody())),
      h('br'),
      verifyCode,
    ),
  );
}
