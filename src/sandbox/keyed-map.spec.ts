import { KeyedMap } from './sandbox.state';

interface Item {
  id: number;
  own: string;
}

const map = (): KeyedMap<Item> => new KeyedMap<Item>((v) => v.own);

describe('KeyedMap (the sandbox finds an object by the shop’s own id without a scan)', () => {
  it('finds a value by its key, and nothing by a key it does not hold', () => {
    const m = map();
    m.set(1, { id: 1, own: 'a' }).set(2, { id: 2, own: 'b' });
    expect(m.findByKey('b')).toEqual({ id: 2, own: 'b' });
    expect(m.findByKey('c')).toBeUndefined();
    expect(m.size).toBe(2);
  });

  it('keeps the first value set under a key, as a scan in insertion order would', () => {
    const m = map();
    const first = { id: 1, own: 'a' };
    const second = { id: 2, own: 'a' };
    m.set(1, first).set(2, second);
    expect(m.findByKey('a')).toBe(first);
    // Setting the same value again under its id changes nothing.
    m.set(1, first);
    expect(m.findByKey('a')).toBe(first);
    // Once the first is gone, the key finds the next in insertion order, then nothing.
    m.delete(1);
    expect(m.findByKey('a')).toBe(second);
    m.delete(2);
    expect(m.findByKey('a')).toBeUndefined();
    const third = { id: 3, own: 'a' };
    m.set(3, third);
    expect(m.findByKey('a')).toBe(third);
  });

  it('follows a value replaced under the same id, and forgets everything on clear', () => {
    const m = map();
    m.set(1, { id: 1, own: 'a' });
    const replaced = { id: 1, own: 'z' };
    m.set(1, replaced);
    expect(m.findByKey('a')).toBeUndefined();
    expect(m.findByKey('z')).toBe(replaced);
    m.clear();
    expect(m.findByKey('z')).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it('is still a Map for everything else (iteration, get, has)', () => {
    const m = map();
    m.set(5, { id: 5, own: 'e' });
    expect([...m.values()]).toEqual([{ id: 5, own: 'e' }]);
    expect(m.get(5)?.own).toBe('e');
    expect(m.has(5)).toBe(true);
  });
});
