import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { clock } from '../common/clock';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Bytes, sha256Hex } from '../common/sha256';
import { DataSource } from 'typeorm';
import { keyIdOf } from '../common/auth.guard';
import { logger } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { consoleSignIns } from '../metrics/metrics';

/** A signed-in operator: the admin key's id (never the key) and the session's CSRF token. */
export interface ConsoleSession {
  keyId: string;
  csrfToken: string;
  expiresAt: Date;
  /** The stored hash of the cookie's id: names the session on the sessions page. */
  handle: string;
  /** The status message an action of this session left for its next page (shown once). */
  flash?: Flash | null;
}

/** A status message: written on the server by the action that it reports, never from a link. */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

const FLASH_MAX = 1000;

/** A session as the sessions page lists it: never its cookie id nor its CSRF token. */
export interface SessionListing {
  handle: string;
  keyId: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  clientAddress: string | null;
}

/** How often a session's last-seen time is written (not on every page view). */
const LAST_SEEN_EVERY_S = 60;
const HANDLE = /^[0-9a-f]{64}$/;

/**
 * Server-side console sessions. The cookie holds a random id; the database holds only its
 * SHA-256, the admin key's id and the session's CSRF token, so a database reader cannot
 * impersonate an operator and the admin key itself is never stored. Sessions expire after
 * ADMIN_SESSION_TTL_S; signing out deletes the row. A session ends with its admin key: every
 * request checks that the session's key id is one of the configured admin keys' ids, and the
 * sessions of keys no longer configured are deleted at start-up.
 */
@Injectable()
export class ConsoleSessions implements OnApplicationBootstrap {
  private readonly adminKeys: Buffer[];
  private readonly shopKeys: Buffer[];
  /** The ids of the admin keys configured now (computed once: the configuration is fixed). */
  private readonly adminKeyIds: string[];
  /** Failed sign-ins per client address in the current window (in memory, per instance). */
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.adminKeys = config.adminApiKeys.map(sha256Bytes);
    this.shopKeys = config.apiKeys.map(sha256Bytes);
    this.adminKeyIds = [...new Set(config.adminApiKeys.map(keyIdOf))];
  }

  /** Sessions opened with an admin key that is no longer configured end now. */
  async onApplicationBootstrap(): Promise<void> {
    const [, removed] = (await this.dataSource.query(
      `DELETE FROM admin_sessions WHERE NOT (key_id = ANY($1::varchar[]))`,
      [this.adminKeyIds],
    )) as [unknown, number];
    if (removed > 0)
      logger.info({ sessions: removed }, 'console sessions of removed admin keys deleted');
  }

  get ttlS(): number {
    return this.config.console.sessionTtlS;
  }

  /** Whether this address may try to sign in now (too many failures: wait for the window). */
  retryAfterS(address: string, now = Date.now()): number {
    const f = this.failures.get(address);
    const { signInWindowS, signInMaxFailures } = this.config.console;
    if (!f || now - f.windowStart >= signInWindowS * 1000) return 0;
    return f.count >= signInMaxFailures
      ? Math.ceil((f.windowStart + signInWindowS * 1000 - now) / 1000)
      : 0;
  }

  private recordFailure(address: string, now = Date.now()): void {
    const f = this.failures.get(address);
    if (!f || now - f.windowStart >= this.config.console.signInWindowS * 1000) {
      this.failures.set(address, { count: 1, windowStart: now });
    } else {
      f.count += 1;
    }
    // Bounded memory under a flood of addresses: forget the oldest windows first.
    if (this.failures.size > 10_000) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  /**
   * Checks an admin key (every key compared, constant time) and opens a session. Shop keys are
   * refused like wrong ones, but counted apart.
   */
  async signIn(
    key: string,
    address: string,
  ): Promise<{ id: string; session: ConsoleSession } | null> {
    const given = sha256Bytes(key);
    let admin = false;
    let shop = false;
    for (const k of this.adminKeys) if (timingSafeEqual(k, given)) admin = true;
    for (const k of this.shopKeys) if (timingSafeEqual(k, given)) shop = true;
    if (!admin) {
      this.recordFailure(address);
      consoleSignIns.inc({ result: shop ? 'shop_key' : 'wrong_key' });
      return null;
    }
    this.failures.delete(address);
    consoleSignIns.inc({ result: 'ok' });
    const id = randomBytes(32).toString('base64url');
    const session: ConsoleSession = {
      keyId: keyIdOf(key),
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(clock.now() + this.ttlS * 1000),
      handle: sha256Hex(id),
    };
    await this.dataSource.query(
      `INSERT INTO admin_sessions (id_hash, key_id, csrf_token, expires_at, client_address)
       VALUES ($1, $2, $3, $4, $5)`,
      [session.handle, session.keyId, session.csrfToken, session.expiresAt, address.slice(0, 64)],
    );
    // Expired sessions are cleared as new ones open: the table stays small without a job.
    await this.dataSource.query(`DELETE FROM admin_sessions WHERE expires_at < clock_now()`);
    return { id, session };
  }

  /**
   * The live session of a cookie id: not expired, and opened with an admin key that is still
   * configured (another instance may not have deleted it yet). Notes when it was last used.
   */
  async find(id: string | undefined): Promise<ConsoleSession | null> {
    if (!id || id.length > 128) return null;
    const handle = sha256Hex(id);
    const rows = (await this.dataSource.query(
      `SELECT key_id, csrf_token, expires_at, flash, last_seen_at < clock_now() - make_interval(secs => $3) AS stale
         FROM admin_sessions
        WHERE id_hash = $1 AND expires_at > clock_now() AND key_id = ANY($2::varchar[])`,
      [handle, this.adminKeyIds, LAST_SEEN_EVERY_S],
    )) as Array<{
      key_id: string;
      csrf_token: string;
      expires_at: Date;
      flash: Flash | null;
      stale: boolean;
    }>;
    const r = rows[0];
    if (!r) return null;
    if (r.stale)
      await this.dataSource.query(
        `UPDATE admin_sessions SET last_seen_at = clock_now() WHERE id_hash = $1`,
        [handle],
      );
    return {
      keyId: r.key_id,
      csrfToken: r.csrf_token,
      expiresAt: r.expires_at,
      handle,
      flash: r.flash,
    };
  }

  /** Leaves a status message for this session's next page (replacing an unread one). */
  async setFlash(session: ConsoleSession, flash: Flash): Promise<void> {
    const kept: Flash = { kind: flash.kind, text: flash.text.slice(0, FLASH_MAX) };
    await this.dataSource.query(`UPDATE admin_sessions SET flash = $2::jsonb WHERE id_hash = $1`, [
      session.handle,
      JSON.stringify(kept),
    ]);
  }

  /**
   * The session's status message, once: cleared as it is shown. Only a message read with the
   * session is cleared (a newer one written meanwhile stays for the next page).
   */
  async takeFlash(session: ConsoleSession): Promise<Flash | null> {
    const flash = session.flash;
    if (!flash) return null;
    await this.dataSource.query(
      `UPDATE admin_sessions SET flash = NULL WHERE id_hash = $1 AND flash = $2::jsonb`,
      [session.handle, JSON.stringify(flash)],
    );
    session.flash = null;
    return flash.kind === 'ok' || flash.kind === 'error' ? { kind: flash.kind, text: String(flash.text) } : null;
  }

  /** Every live session, newest first, as operators see them. */
  async list(): Promise<SessionListing[]> {
    const rows = (await this.dataSource.query(
      `SELECT id_hash, key_id, created_at, last_seen_at, expires_at, client_address
         FROM admin_sessions
        WHERE expires_at > clock_now() AND key_id = ANY($1::varchar[])
        ORDER BY created_at DESC LIMIT 500`,
      [this.adminKeyIds],
    )) as Array<{
      id_hash: string;
      key_id: string;
      created_at: Date;
      last_seen_at: Date;
      expires_at: Date;
      client_address: string | null;
    }>;
    return rows.map((r) => ({
      handle: r.id_hash,
      keyId: r.key_id,
      createdAt: r.created_at,
      lastSeenAt: r.last_seen_at,
      expiresAt: r.expires_at,
      clientAddress: r.client_address,
    }));
  }

  /** Ends one session (by its handle) or every session of a key id; returns how many ended. */
  async revoke(target: { handle: string } | { keyId: string }): Promise<number> {
    if ('handle' in target) {
      if (!HANDLE.test(target.handle)) return 0;
      const [, n] = (await this.dataSource.query(`DELETE FROM admin_sessions WHERE id_hash = $1`, [
        target.handle,
      ])) as [unknown, number];
      return n;
    }
    if (target.keyId === '' || target.keyId.length > 16) return 0;
    const [, n] = (await this.dataSource.query(`DELETE FROM admin_sessions WHERE key_id = $1`, [
      target.keyId,
    ])) as [unknown, number];
    return n;
  }

  async signOut(id: string | undefined): Promise<void> {
    if (!id || id.length > 128) return;
    await this.dataSource.query(`DELETE FROM admin_sessions WHERE id_hash = $1`, [sha256Hex(id)]);
  }
}
