/**
 * What every page of the docs site shares with the build: the error a build fails with (its message
 * says which page and how to fix it) and the Content-Security-Policy each page carries.
 */

/** A page could not be built; the message says which and why. */
export class DocsBuildError extends Error {
  override readonly name = 'DocsBuildError';
}

/**
 * The policy of every page: its own origin only (blob: and data: are created by the page itself).
 * Redoc needs inline scripts and styles; the guides need neither but may hold inline styles.
 */
export const CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline' blob:; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' blob: data:; worker-src 'self' blob:; " +
  "frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'none'";
