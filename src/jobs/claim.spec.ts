import { forEachBounded } from './claim';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('runs every item with at most `concurrency` in flight, and returns none left', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  const left = await forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await sleep(5);
    seen.push(n);
    inFlight--;
  });
  expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(most).toBe(3);
  expect(left).toEqual([]);
});

it('starts nothing more once stop() says so, lets the items in flight finish, and returns the rest', async () => {
  let stopping = false;
  const finished: number[] = [];
  const run = forEachBounded(
    [1, 2, 3, 4, 5, 6, 7, 8],
    2,
    async (n) => {
      await sleep(20);
      finished.push(n);
    },
    () => stopping,
  );
  await sleep(5); // items 1 and 2 are in flight
  stopping = true;
  const left = await run;
  expect(finished.sort()).toEqual([1, 2]);
  expect(left).toEqual([3, 4, 5, 6, 7, 8]);
});
