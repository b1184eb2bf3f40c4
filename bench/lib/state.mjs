// What a run gathers as it goes: the table's rows, the details for bench/results.json, and the
// clean-ups that stop what it started (run in reverse at the end).
export const rows = [];
export const details = {};
export const started = new Date();
export const cleanups = [];
/** Tags the shop's ids of this run's objects (order ids, payout ids) so runs never collide. */
export const runTag = started.getTime().toString(36);

export function row(name, figure, goal, ratio, ok) {
  rows.push({ row: name, figure, goal, ratio: ratio ?? '', verdict: ok === null ? 'n/a' : ok ? 'ok' : 'MISS' });
}
