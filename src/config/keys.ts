/**
 * Keys at start-up: the shop and admin API keys (made once and kept under DATA_DIR in sandbox
 * mode when none are configured) and the data-encryption key ring. Messages name the variable or
 * the file, never a key.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DataKey, generateKeyRingText, parseKeyRing } from '../common/key-ring';
import { ConfigError, type Env } from './parse';
import { V } from './schema';
import type { ShopKey } from './types';
import { allShopScopes } from './values';

export interface ApiKeys {
  shopKeys: ShopKey[];
  apiKeys: string[];
  adminApiKeys: string[];
  generatedKeys: boolean;
  devApiKeysPath?: string;
}

/**
 * API_KEYS and ADMIN_API_KEYS; both required with a real gateway. In sandbox mode a missing one
 * is made once and kept under DATA_DIR, or made fresh by `generateKey` when one is given (tests).
 */
export function apiKeys(
  env: Env,
  sandboxMode: boolean,
  dataDir: string,
  generateKey: (() => string) | undefined,
): ApiKeys {
  let shopKeys = V.API_KEYS.read(env);
  let apiKeys = shopKeys.map((k) => k.key);
  let adminApiKeys = V.ADMIN_API_KEYS.read(env);
  if (apiKeys.length > 0 && adminApiKeys.length > 0)
    return { shopKeys, apiKeys, adminApiKeys, generatedKeys: false };
  if (!sandboxMode) {
    throw new ConfigError(
      apiKeys.length === 0 ? 'API_KEYS' : 'ADMIN_API_KEYS',
      'is required with a real gateway',
    );
  }
  const kept = generateKey === undefined ? devApiKeysFile(dataDir) : undefined;
  const make = (role: 'shop' | 'admin'): string => (kept ? kept[role] : generateKey!());
  if (apiKeys.length === 0) {
    apiKeys = [make('shop')];
    shopKeys = [{ key: apiKeys[0], scopes: allShopScopes() }];
  }
  if (adminApiKeys.length === 0) adminApiKeys = [make('admin')];
  return { shopKeys, apiKeys, adminApiKeys, generatedKeys: true, devApiKeysPath: kept?.path };
}

/** DATA_ENCRYPTION_KEYS, required with a real gateway; in sandbox mode the kept development ring. */
export function dataEncryptionKeys(
  env: Env,
  sandboxMode: boolean,
  dataDir: string,
  devKeyRing: (dataDir: string) => { text: string; path: string },
): { keys: DataKey[]; path?: string } {
  const raw = V.DATA_ENCRYPTION_KEYS.read(env);
  if (raw === undefined && !sandboxMode)
    throw new ConfigError(
      'DATA_ENCRYPTION_KEYS',
      'is required with a real gateway (id:base64-key; make a key with openssl rand -base64 32)',
    );
  const dev = raw === undefined ? devKeyRing(dataDir) : undefined;
  const variable = dev ? dev.path : 'DATA_ENCRYPTION_KEYS';
  try {
    return { keys: parseKeyRing(dev ? dev.text : raw!), path: dev?.path };
  } catch (e) {
    throw new ConfigError(variable, (e as Error).message);
  }
}

/** The development key ring: generated on first start, then read from `DATA_DIR`. */
export function devKeyRingFile(dataDir: string): { text: string; path: string } {
  const path = join(dataDir, 'data-encryption-keys');
  return { text: keptFile(dataDir, path, () => `${generateKeyRingText()}\n`).trim(), path };
}

/**
 * A file made once under `dataDir`, readable by its owner only, then read at every start. Written
 * aside, then linked into place: two processes starting at once never read a half-written file,
 * and whichever links first wins.
 */
function keptFile(dataDir: string, path: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(path)) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, make(), { mode: 0o600 });
    try {
      linkSync(tmp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  return readFileSync(path, 'utf8');
}

const DEV_KEY_LINE = /^(shop|admin)=(\S{16,})$/;

/**
 * The development API keys (sandbox mode, none configured): made on first start, then the same
 * at every start (`DATA_DIR/development-api-keys`, lines `shop=…` and `admin=…`), so a shop's
 * configuration survives a restart like its data does.
 */
function devApiKeysFile(dataDir: string): { shop: string; admin: string; path: string } {
  const path = join(dataDir, 'development-api-keys');
  const text = keptFile(dataDir, path, () => `shop=${defaultKey()}\nadmin=${defaultKey()}\n`);
  const keys: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    const m = DEV_KEY_LINE.exec(line);
    if (m !== null) keys[m[1]] = m[2];
    else if (line !== '')
      throw new ConfigError(path, 'has a line that is not shop=KEY or admin=KEY');
  }
  if (keys.shop === undefined || keys.admin === undefined || keys.shop === keys.admin)
    throw new ConfigError(path, 'must hold two different keys, shop=KEY and admin=KEY');
  return { shop: keys.shop, admin: keys.admin, path };
}

function defaultKey(): string {
  return `dev_${randomBytes(24).toString('base64url')}`;
}
