import { randomBytesPooled, randomToken } from './random-token';

describe('randomToken', () => {
  it('gives base64url text of the asked number of bytes', () => {
    for (const bytes of [1, 16, 32, 33, 1024, 5000]) {
      const t = randomToken(bytes);
      expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(t, 'base64url')).toHaveLength(bytes);
    }
  });

  it('never hands out the same bytes twice, across many pool refills', () => {
    const seen = new Set<string>();
    // 20,000 tokens of 32 bytes cross the 4 KB pool about 160 times.
    for (let i = 0; i < 20_000; i++) seen.add(randomToken(32));
    expect(seen.size).toBe(20_000);
  });

  it('does not hand out the zeros it leaves behind (bytes look random)', () => {
    // 64 KB of output: each byte value should appear about 256 times; a run of zeros would not.
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 2048; i++)
      for (const b of Buffer.from(randomToken(32), 'base64url')) counts[b]++;
    expect(Math.max(...counts)).toBeLessThan(400);
    expect(Math.min(...counts)).toBeGreaterThan(150);
  });

  it('refuses a size that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => randomToken(bad)).toThrow(RangeError);
  });
});

describe('randomBytesPooled', () => {
  it('gives buffers of their own: later draws and refills never change one handed out', () => {
    const first = randomBytesPooled(12);
    const copy = Buffer.from(first);
    const seen = new Set<string>([first.toString('hex')]);
    // 10,000 nonces of 12 bytes cross the 4 KB pool about 30 times.
    for (let i = 0; i < 10_000; i++) seen.add(randomBytesPooled(12).toString('hex'));
    expect(first.equals(copy)).toBe(true);
    expect(first).toHaveLength(12);
    expect(seen.size).toBe(10_001);
    expect(randomBytesPooled(5000)).toHaveLength(5000);
    for (const bad of [0, -1, 1.5]) expect(() => randomBytesPooled(bad)).toThrow(RangeError);
  });
});
