/**
 * The `--database-url` of a shared sandbox: checked before anything connects, and shown in logs
 * and messages without its password.
 */

export class DatabaseUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUrlError';
  }
}

const EXAMPLE = 'postgres://USER:PASSWORD@HOST:5432/DATABASE';

/** Checks a database URL; answers it unchanged, or throws a {@link DatabaseUrlError} saying how to fix it. */
export function checkDatabaseUrl(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw new DatabaseUrlError(`The database URL is empty: give one such as ${EXAMPLE}.`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new DatabaseUrlError(`The database URL is not a URL: write it as ${EXAMPLE}.`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(
      `The database URL starts with '${url.protocol}': the shared sandbox runs on PostgreSQL, write it as ${EXAMPLE}.`,
    );
  }
  if (url.hostname === '' && !url.searchParams.has('host')) {
    throw new DatabaseUrlError(`The database URL names no host: write it as ${EXAMPLE}.`);
  }
  if (url.pathname === '' || url.pathname === '/') {
    throw new DatabaseUrlError(`The database URL names no database: add it after the host, as in ${EXAMPLE}.`);
  }
  return trimmed;
}

/** `postgres://user@host:port/database`: the URL without its password or parameters. */
export function describeDatabase(text: string): string {
  try {
    const url = new URL(text);
    const user = url.username === '' ? '' : `${decodeURIComponent(url.username)}@`;
    return `${url.protocol}//${user}${url.host}${url.pathname}`;
  } catch {
    return 'the database';
  }
}
