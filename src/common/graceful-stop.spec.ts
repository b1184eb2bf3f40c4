import { gracefulStop, shutdownDeadlineMs } from './graceful-stop';

function harness(close: () => Promise<void>, deadlineMs = 50, repeatWindowMs = 0) {
  const exits: number[] = [];
  const lines: string[] = [];
  const log = {
    info: (_o: object, m: string) => void lines.push(`info ${m}`),
    warn: (_o: object, m: string) => void lines.push(`warn ${m}`),
    error: (_o: object, m: string) => void lines.push(`error ${m}`),
  };
  const stop = gracefulStop({
    close,
    deadlineMs,
    exit: (c) => void exits.push(c),
    log: log as never,
    repeatWindowMs,
  });
  return { stop, exits, lines };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('exits 0 once the close has finished, and not before', async () => {
  let finish!: () => void;
  const h = harness(() => new Promise<void>((r) => (finish = r)), 1000);
  h.stop('SIGTERM');
  await sleep(20);
  expect(h.exits).toEqual([]);
  finish();
  await sleep(0);
  expect(h.exits).toEqual([0]);
  await sleep(1100); // the deadline was cleared: no second exit
  expect(h.exits).toEqual([0]);
});

it('exits 1 at the deadline when the close never finishes, saying why', async () => {
  const h = harness(() => new Promise<void>(() => undefined), 50);
  h.stop('SIGTERM');
  await sleep(20);
  expect(h.exits).toEqual([]);
  await sleep(80);
  expect(h.exits).toEqual([1]);
  expect(h.lines).toContain('error shutdown did not finish in time: exiting');
});

it('a second signal while closing exits 1 at once', async () => {
  let closes = 0;
  const h = harness(() => {
    closes++;
    return new Promise<void>(() => undefined);
  }, 10_000);
  h.stop('SIGTERM');
  h.stop('SIGINT');
  expect(h.exits).toEqual([1]);
  expect(closes).toBe(1);
  expect(h.lines).toContain('warn second stop signal: exiting now, shutdown not finished');
});

it('the same stop delivered twice at once (process group and npm) is one stop', async () => {
  let closes = 0;
  let finish!: () => void;
  const h = harness(
    () => {
      closes++;
      return new Promise<void>((r) => (finish = r));
    },
    10_000,
    200,
  );
  h.stop('SIGINT');
  h.stop('SIGINT');
  await sleep(50);
  h.stop('SIGINT');
  expect(h.exits).toEqual([]);
  expect(closes).toBe(1);
  expect(h.lines).toEqual([
    'info shutting down',
    'info stop signal delivered again: already shutting down',
    'info stop signal delivered again: already shutting down',
  ]);
  finish();
  await sleep(0);
  expect(h.exits).toEqual([0]);
});

it('a signal after the repeat window is a second Ctrl-C: exits 1 at once', async () => {
  const h = harness(() => new Promise<void>(() => undefined), 10_000, 100);
  h.stop('SIGINT');
  h.stop('SIGINT');
  expect(h.exits).toEqual([]);
  await sleep(150);
  h.stop('SIGINT');
  expect(h.exits).toEqual([1]);
  expect(h.lines).toContain('warn second stop signal: exiting now, shutdown not finished');
});

it('a close that fails exits 1', async () => {
  const h = harness(() => Promise.reject(new Error('pool end failed')), 1000);
  h.stop('SIGTERM');
  await sleep(0);
  expect(h.exits).toEqual([1]);
  expect(h.lines).toContain('error shutdown failed');
});

it('allows one gateway call and ten seconds more', () => {
  expect(shutdownDeadlineMs(30_000)).toBe(40_000);
  expect(shutdownDeadlineMs(3_000)).toBe(13_000);
});
