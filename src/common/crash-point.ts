/**
 * Crash points for the chaos suite (`npm run test:chaos`): the service dies with SIGKILL at a
 * named point between two steps of a money path, exactly as a power cut would leave it.
 *
 * Inert unless `CHAOS_CRASH_AT` names the point, and never in production (`NODE_ENV=production`
 * ignores it), so a production process cannot be made to crash by its environment alone.
 * Names: `<operation>.<step>`, e.g. `invoice.create.after_claim`, `payout.create.after_answer`.
 */
const target = process.env.NODE_ENV === 'production' ? undefined : process.env.CHAOS_CRASH_AT;

export function crashPoint(name: string): void {
  if (target !== undefined && target === name) process.kill(process.pid, 'SIGKILL');
}
