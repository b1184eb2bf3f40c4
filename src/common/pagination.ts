import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ValidationFailed } from './errors';

/** `limit` (default 50, max 500) and an opaque `cursor`, as every list route takes. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50, example: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({
    description: 'nextCursor of the previous page',
    example: 'WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMFoiLCI1In0',
  })
  @IsOptional()
  @IsString()
  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const CURSOR_VERSION = 'k1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BIGINT = /^[1-9]\d{0,17}$/;

/**
 * A cursor names the last row of the page by its id only; the next page starts below that row's
 * own (created_at, id), read by PostgreSQL at full (microsecond) precision. A timestamp carried
 * through JavaScript would lose the microseconds and skip or repeat rows created within one
 * millisecond of a page boundary.
 */
export function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, id])).toString('base64url');
}

/** The row id a cursor names, or null without one; anything not made by encodeCursor is a 400. */
export function decodeCursor(
  cursor: string | undefined,
  idKind: 'uuid' | 'bigint' = 'uuid',
): string | null {
  if (!cursor) return null;
  const bad = new ValidationFailed([
    { field: 'cursor', message: 'is not a cursor returned by this API' },
  ]);
  if (cursor.length > 200) throw bad;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    parsed[0] !== CURSOR_VERSION ||
    typeof parsed[1] !== 'string'
  )
    throw bad;
  const id = parsed[1];
  if (!(idKind === 'uuid' ? UUID : BIGINT).test(id)) throw bad;
  return id;
}

/**
 * The keyset condition "after the cursor's row" for rows listed newest first by (`at`, id).
 * `table` and `at` are constants of the caller, never input.
 */
export function afterCursorSql(
  alias: string,
  table: string,
  at = 'created_at',
  /** The cursor id's parameter: TypeORM's named `:cursorId`, or a `$n` of a raw query. */
  param = ':cursorId',
): string {
  return `(${alias}.${at}, ${alias}.id) < (SELECT c.${at}, c.id FROM ${table} c WHERE c.id = ${param})`;
}

/**
 * Builds a page from rows fetched with `limit + 1` newest first: the extra row only says that
 * another page exists.
 */
export function toPage<R extends { id: string }, T>(
  rows: R[],
  limit: number,
  map: (r: R) => T,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items: items.map(map),
    nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}

export const DEFAULT_PAGE_SIZE = 50;
