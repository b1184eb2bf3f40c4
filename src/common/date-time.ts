/**
 * The one reading of dates and times that callers send (shared/API.md, Conventions: dates and
 * times). A time is ISO 8601 in its extended calendar form with an offset
 * (`2026-12-01T10:00:00Z`, `2026-12-01T13:00+03:00`, a fraction of up to 6 digits after a dot);
 * a day is `YYYY-MM-DD`. Anything else (week and ordinal dates, the basic format, a comma
 * fraction, hours alone, no offset where a time is asked, an offset past ±14:00, 24:00, a leap
 * second, a day that is not in the calendar, year 0) is refused: each of these is read one way by
 * JavaScript, another (or not at all) by PostgreSQL. What is accepted is turned into a Date here,
 * and that Date, never the text, is what a query binds, so the code and the database read the
 * same instant.
 */

/** `time`: an instant with its offset; `day`: a calendar day; `timeOrDay`: either (a day is its UTC midnight). */
export type DateTimeKind = 'time' | 'day' | 'timeOrDay';

const TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Longer than any accepted text: refused before a pattern runs. */
const MAX_LENGTH = 40;

/** The UTC midnight of a calendar day, or null when there is no such day (year 1 to 9999). */
function utcMidnight(y: number, mo: number, d: number): Date | null {
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return null;
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  at.setUTCFullYear(y, mo - 1, d);
  return at.getUTCMonth() === mo - 1 && at.getUTCDate() === d ? at : null;
}

/** The calendar day `text` names (`YYYY-MM-DD`), as its UTC midnight; null: not one. */
export function parseDay(text: unknown): Date | null {
  if (typeof text !== 'string' || text.length > MAX_LENGTH) return null;
  const m = DAY.exec(text);
  return m ? utcMidnight(Number(m[1]), Number(m[2]), Number(m[3])) : null;
}

/** The instant `text` names as a time with an offset; null: not one. */
export function parseTime(text: unknown): Date | null {
  if (typeof text !== 'string' || text.length > MAX_LENGTH) return null;
  const m = TIME.exec(text);
  if (!m) return null;
  const day = utcMidnight(Number(m[1]), Number(m[2]), Number(m[3]));
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? '0')];
  if (day === null || h > 23 || mi > 59 || s > 59) return null;
  // Milliseconds: a Date holds no finer (a finer fraction is cut, the same for both readers).
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offsetMin = 0;
  if (m[8] === undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 14 || om > 59 || (oh === 14 && om > 0)) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return new Date(day.getTime() + ((h * 60 + mi - offsetMin) * 60 + s) * 1000 + ms);
}

/** `text` read as a field of that kind; null: refused (dateTimeMessage says why). */
export function parseDateTime(text: unknown, kind: DateTimeKind): Date | null {
  if (kind === 'day') return parseDay(text);
  if (kind === 'time') return parseTime(text);
  return parseTime(text) ?? parseDay(text);
}

/** The one message of a refused date or time, naming the form the field takes. */
export function dateTimeMessage(kind: DateTimeKind): string {
  if (kind === 'day') return 'must be a calendar day YYYY-MM-DD, such as 2026-12-01';
  const time = 'an ISO 8601 date-time with an offset, such as 2026-12-01T10:00:00Z or 2026-12-01T13:00:00+03:00';
  return kind === 'time' ? `must be ${time}` : `must be ${time}, or a calendar day YYYY-MM-DD`;
}

/** A value the DTO already accepted, as its Date (undefined stays undefined). */
export function instantOf(text: string | undefined, kind: DateTimeKind): Date | undefined {
  if (text === undefined) return undefined;
  const at = parseDateTime(text, kind);
  if (at === null) throw new Error(`not a ${kind} accepted by the DTO`);
  return at;
}
