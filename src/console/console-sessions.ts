import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { keyIdOf } from '../common/auth.guard';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { consoleSignIns } from '../metrics/metrics';

/** A signed-in operator: the admin key's id (never the key) and the session's CSRF token. */
export interface ConsoleSession {
  keyId: string;
  csrfToken: string;
  expiresAt: Date;
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Constant-time equality of two short texts (CSRF tokens, keys), whatever their lengths. */
export function sameText(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * Server-side console sessions. The cookie holds a random id; the database holds only its
 * SHA-256, the admin key's id and the session's CSRF token, so a database reader cannot
 * impersonate an operator and the admin key itself is never stored. Sessions expire after
 * ADMIN_SESSION_TTL_S; signing out deletes the row.
 */
@Injectable()
export class ConsoleSessions {
  private readonly adminKeys: Buffer[];
  private readonly shopKeys: Buffer[];
  /** Failed sign-ins per client address in the current window (in memory, per instance). */
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.adminKeys = config.adminApiKeys.map(sha256);
    this.shopKeys = config.apiKeys.map(sha256);
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
    const given = sha256(key);
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
      expiresAt: new Date(Date.now() + this.ttlS * 1000),
    };
    await this.dataSource.query(
      `INSERT INTO admin_sessions (id_hash, key_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4)`,
      [sha256(id).toString('hex'), session.keyId, session.csrfToken, session.expiresAt],
    );
    // Expired sessions are cleared as new ones open: the table stays small without a job.
    await this.dataSource.query(`DELETE FROM admin_sessions WHERE expires_at < now()`);
    return { id, session };
  }

  async find(id: string | undefined): Promise<ConsoleSession | null> {
    if (!id || id.length > 128) return null;
    const rows = (await this.dataSource.query(
      `SELECT key_id, csrf_token, expires_at FROM admin_sessions WHERE id_hash = $1 AND expires_at > now()`,
      [sha256(id).toString('hex')],
    )) as Array<{ key_id: string; csrf_token: string; expires_at: Date }>;
    const r = rows[0];
    return r ? { keyId: r.key_id, csrfToken: r.csrf_token, expiresAt: r.expires_at } : null;
  }

  async signOut(id: string | undefined): Promise<void> {
    if (!id || id.length > 128) return;
    await this.dataSource.query(`DELETE FROM admin_sessions WHERE id_hash = $1`, [
      sha256(id).toString('hex'),
    ]);
  }
}
