/** Calendar days in India Standard Time, as settlement counts them. */
import { time } from './values.js';

/** India Standard Time is UTC+05:30 all year. */
const IST_OFFSET_MS = 330 * time.MINUTE;

/** The IST calendar day (`YYYY-MM-DD`) of an instant. */
export function istDate(at: number): string {
  return new Date(at + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` plus `days` (may be negative). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * time.DAY).toISOString().slice(0, 10);
}
