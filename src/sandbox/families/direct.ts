/**
 * What the web and SDK flows share (D27): the statuses of a direct-integration transaction and the
 * user's actions that finish it, played by the sandbox endpoints `.../confirm|cancel|fail`.
 */

export type DirectStatus = 'PENDING' | 'SUCCESS' | 'CANCELLED' | 'FAILURE';

/** The user's action in the app or on the hosted page, and the final status it leads to. */
export const USER_ACTIONS = Object.freeze({
  confirm: 'SUCCESS',
  cancel: 'CANCELLED',
  fail: 'FAILURE',
} as const satisfies Record<string, Exclude<DirectStatus, 'PENDING'>>);

export type UserAction = keyof typeof USER_ACTIONS;
