/** What the web and SDK flows' setups share: a transaction left as it is, and one confirmed. */
import { unexpected, type Kit, type SetupResponse } from '../kit.js';
import type { Plan } from '../types.js';

export interface DirectSetup {
  /** Initiates a transaction of this id, signed. */
  initiate(id: string): Promise<SetupResponse>;
  /** The status of a successful initiate (SDK 201, web 200). */
  created: number;
  /** The setup state key and id suffix of the confirmed transaction. */
  confirmed: string;
  suffix: string;
  /** Confirms a transaction through the sandbox's test control: the path called and its answer. */
  confirm(id: string): Promise<{ path: string; response: SetupResponse }>;
}

/**
 * Initiates `<run>_existing` (the duplicate and the status check) and a second transaction that the
 * sandbox's test control confirms (the refund). A server without that control (404, 405) sets
 * `noConfirmControl`, and the refund 200 is skipped with the reason.
 */
export async function setUpDirect(kit: Kit, setup: DirectSetup): Promise<void> {
  const existing = kit.id('existing');
  const first = await setup.initiate(existing);
  if (first.status === setup.created) kit.state.existingId = existing;
  else kit.miss('existingId', unexpected(`initiating ${existing}`, first));

  const id = kit.id(setup.suffix);
  const second = await setup.initiate(id);
  if (second.status !== setup.created) {
    kit.miss(setup.confirmed, unexpected(`initiating ${id}`, second));
    return;
  }
  const { path, response } = await setup.confirm(id);
  if (response.status >= 200 && response.status < 300) kit.state[setup.confirmed] = id;
  else if (response.status === 404 || response.status === 405) kit.state.noConfirmControl = true;
  else kit.miss(setup.confirmed, unexpected(`POST ${path}`, response));
}

/** The refund 200's skip against a server without the confirm control (`flow`: `sdk` or `web`). */
export function noConfirmControlSkip(kit: Kit, flow: 'sdk' | 'web'): Plan | undefined {
  if (!kit.state.noConfirmControl) return undefined;
  return {
    skip:
      '200: needs a transaction confirmed by a user (the server has no test control ' +
      `POST /sandbox/${flow}/transactions/{id}/confirm)`,
  };
}
