/** What the configuration specs share: a complete real-gateway environment and error capture. */
import { ConfigError, loadConfig } from './config';

/** Every setting a real gateway requires, none of them the sandbox's. */
export const real = {
  GATEWAY_BASE_URL: 'https://pay.example.com/gateway/v1/',
  GATEWAY_SHOP_ID: '42',
  GATEWAY_SECRET_KEY: 's3cr3t-value',
  API_KEYS: 'shop-key-0123456789abcdef',
  ADMIN_API_KEYS: 'admin-key-0123456789abcdef',
  PUBLIC_BASE_URL: 'https://payments.example.com',
  DATA_ENCRYPTION_KEYS: `k2026:${Buffer.alloc(32, 1).toString('base64')}`,
};

export const devRing = (dir: string): { text: string; path: string } => ({
  text: `dev:${Buffer.alloc(32, 2).toString('base64')}`,
  path: `${dir}/data-encryption-keys`,
});

/** The ConfigError loadConfig throws for `env`; fails the test when it throws none. */
export function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e;
  }
  throw new Error('expected a ConfigError');
}
