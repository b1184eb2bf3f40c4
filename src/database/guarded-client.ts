import { Client } from 'pg';
import { logger } from '../common/logger';

const log = logger.child({ component: 'database' });

/**
 * The pool's connection class: a `pg` Client that always has a listener for its `error` event.
 *
 * A client's owner (the pool while it is idle, TypeORM's query runner or `pool.query` while it is
 * checked out) listens for the errors of its connection and discards it. There is a moment with
 * no owner listening: pg-pool hands a client to a waiting TypeORM query runner synchronously, and
 * the runner adds its listener a promise tick later. When PostgreSQL stops, its last message
 * (FATAL 57P01, "terminating connection due to administrator command") can arrive in the same
 * socket read as the answer that freed the client, and an `error` event nobody listens for is
 * thrown by Node and ends the process (seen under load in the chaos suite's database-loss
 * scenario). With this listener the error is logged; the owner still sees it as its next query's
 * failure ("not queryable") and releases the client with that error, so the pool drops it.
 */
export class GuardedClient extends Client {
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    this.on('error', (err: Error & { code?: string }) =>
      log.warn({ code: err.code, err: err.message }, 'database connection lost'),
    );
  }
}
