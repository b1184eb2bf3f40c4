/** Rows one retention statement touches: each batch is its own short transaction. */
export const RETENTION_BATCH = 1000;
/** Pause between batches, so other work gets the rows, locks and I/O in between. */
export const RETENTION_PAUSE_MS = 50;
/** Batches per run at most; the rest waits for the next run. */
const MAX_BATCHES = 10_000;

/**
 * Runs `batch` (one statement in its own transaction, touching at most `size` rows and
 * returning how many it touched) until a batch comes back short, pausing between batches.
 * No lock outlives its batch. Returns the total touched.
 */
export async function inBatches(
  batch: (size: number) => Promise<number>,
  opts: { size?: number; pauseMs?: number } = {},
): Promise<number> {
  const size = opts.size ?? RETENTION_BATCH;
  const pauseMs = opts.pauseMs ?? RETENTION_PAUSE_MS;
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await batch(size);
    total += n;
    if (n < size) break;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return total;
}

/** How often the retention jobs run (their work is small after the first run). */
export const RETENTION_EVERY_MS = 15 * 60 * 1000;
