export default async function globalTeardown(): Promise<void> {
  const db = (globalThis as { __EMBEDDED_PG__?: { stop(): Promise<void> } }).__EMBEDDED_PG__;
  if (db) await db.stop();
}
