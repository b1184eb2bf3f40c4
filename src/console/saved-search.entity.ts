import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/**
 * An operator's named filters of one console list. Private to the admin key that
 * saved it; `query` holds only filter names the list declares (console-lists.ts), never SQL.
 */
@Entity('console_saved_searches')
@Unique('uq_console_saved_searches_key_list_name', ['keyId', 'list', 'name'])
export class SavedSearchEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  /** The list's name ("invoices"). */
  @Column({ type: 'varchar', length: 32 }) list: string;
  @Column({ type: 'varchar', length: 100 }) name: string;
  /** Filter name → value. */
  @Column({ type: 'jsonb' }) query: Record<string, string>;
  /** Key id of the admin key that saved it. */
  @Column({ name: 'key_id', type: 'varchar', length: 64 }) keyId: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', default: () => 'clock_now()' }) createdAt: Date;
}
