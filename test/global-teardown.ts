import { admin } from './support/database';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (template && process.env.TEST_DATABASE_URL) {
    await admin(process.env.TEST_DATABASE_URL, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  }
  const db = (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__;
  if (db) await db.stop();
}
