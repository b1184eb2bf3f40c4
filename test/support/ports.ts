import { createServer } from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range (32768–60999 on Linux by default): a
 * service that a test kills and restarts on the same port (the chaos worlds, a restarted
 * PostgreSQL) is down for a moment, and a port from the ephemeral range can be taken meanwhile
 * as the local port of any outgoing connection (CI once failed a restart with EADDRINUSE).
 * Each Jest worker draws from its own slice, so two workers do not hand out the same port, and
 * a process never hands out one port twice.
 */
const BASE = 20_000;
const SLICE = 1_500;
const SLICES = 8;
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/** A TCP port free on every address right now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const start =
    BASE + (((Number.isInteger(worker) && worker > 0 ? worker : 1) - 1) % SLICES) * SLICE;
  for (let tries = 0; tries < 500; tries++) {
    const port = start + Math.floor(Math.random() * SLICE);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${start}-${start + SLICE - 1}`);
}
