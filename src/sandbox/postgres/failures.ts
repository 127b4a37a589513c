/**
 * What went wrong with the shared store's database, worded for a log line or a 503 answer: the
 * cause and what to do, never the database URL or a password.
 */
import { StoreUnavailableError } from '../store.js';

/** What went wrong with the database, for a log line or a 503: never the URL or a password. */
export function describeFailure(error: unknown): string {
  if (error instanceof StoreUnavailableError) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: is PostgreSQL running and listening there?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
      return 'the connection timed out';
    case '53100':
      return `the database's disk is full (${message})`;
    case '28P01':
    case '28000':
      return 'the user or password was refused';
    case '3D000':
      return `the database does not exist (${message}): create it (createdb) or correct the URL`;
    case '57P01':
    case '57P02':
    case '57P03':
      return `the database server is shutting down or starting (${message})`;
    default:
      return message.replace(/postgres(?:ql)?:\/\/[^\s]*/g, '[database URL]');
  }
}
