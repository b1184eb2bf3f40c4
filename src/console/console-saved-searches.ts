import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Filters } from './console-lists';

export interface SavedSearch {
  id: string;
  name: string;
  query: Filters;
}

/** Most saved searches one admin key keeps per list. */
export const SAVED_SEARCHES_MAX = 50;

/**
 * Saved searches of the console's lists. Private to the admin key that saved them: every read
 * and delete is scoped by the signed-in key id, so an operator never sees or removes another
 * key's searches. The filters were checked against the list before they get here.
 */
@Injectable()
export class ConsoleSavedSearches {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async list(keyId: string, list: string): Promise<SavedSearch[]> {
    const rows = (await this.dataSource.query(
      `SELECT id::text AS id, name, query FROM console_saved_searches
        WHERE key_id = $1 AND list = $2 ORDER BY name, id LIMIT ${SAVED_SEARCHES_MAX}`,
      [keyId, list],
    )) as Array<{ id: string; name: string; query: Record<string, string> }>;
    return rows.map((r) => ({ id: r.id, name: r.name, query: r.query }));
  }

  /** Saves (or replaces, under the same name) one search; 'full' when the key has too many. */
  async save(keyId: string, list: string, name: string, query: Filters): Promise<'saved' | 'full'> {
    // A soft bound against a form in a loop: two saves at the same instant may both pass it.
    const rows = (await this.dataSource.query(
      `INSERT INTO console_saved_searches (list, name, query, key_id)
       SELECT $1::varchar, $2::varchar, $3::jsonb, $4::varchar
        WHERE (SELECT count(*) FROM console_saved_searches WHERE key_id = $4::varchar AND list = $1::varchar) < $5
           OR EXISTS (SELECT 1 FROM console_saved_searches
                       WHERE key_id = $4::varchar AND list = $1::varchar AND name = $2::varchar)
       ON CONFLICT (key_id, list, name) DO UPDATE SET query = EXCLUDED.query, created_at = clock_now()
       RETURNING id`,
      [list, name, JSON.stringify(query), keyId, SAVED_SEARCHES_MAX],
    )) as unknown[];
    return rows.length > 0 ? 'saved' : 'full';
  }

  /** Deletes one of this key's searches of this list; false when it has none with that id. */
  async remove(keyId: string, list: string, id: string): Promise<boolean> {
    if (!/^[1-9]\d{0,17}$/.test(id)) return false;
    const [, count] = (await this.dataSource.query(
      `DELETE FROM console_saved_searches WHERE id = $1 AND key_id = $2 AND list = $3`,
      [id, keyId, list],
    )) as [unknown, number];
    return count > 0;
  }
}
