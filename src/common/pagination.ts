import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ValidationFailed } from './errors';

/** `limit` (default 50, max 500) and an opaque `cursor`, as every list route takes. */
export class PageQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @IsOptional()
  @IsString()
  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Keyset position: rows are listed newest first by (created_at, id). */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify([pos.createdAt, pos.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | null {
  if (!cursor) return null;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt))) throw new Error();
    return { createdAt, id };
  } catch {
    throw new ValidationFailed([{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
  }
}

/**
 * Builds a page from rows fetched with `limit + 1` newest first: the extra row only says that
 * another page exists.
 */
export function toPage<R extends { createdAt: Date; id: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items: items.map(map),
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt.toISOString(), id: last.id }) : null,
  };
}

export const DEFAULT_PAGE_SIZE = 50;
