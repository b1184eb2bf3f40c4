import { parseDateTime, parseDay, parseTime } from './date-time';

describe('the one date-time parser', () => {
  it.each([
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T03:00:00+03:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2025-12-31T23:30:00-00:30', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00.500Z'],
    ['2026-01-01T00:00:00.123456Z', '2026-01-01T00:00:00.123Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['2028-02-29T12:00:00+14:00', '2028-02-28T22:00:00.000Z'],
  ])('takes the time %s as %s', (text, iso) => {
    expect(parseTime(text)?.toISOString()).toBe(iso);
    expect(parseDateTime(text, 'timeOrDay')?.toISOString()).toBe(iso);
    expect(parseDateTime(text, 'day')).toBeNull();
  });

  it.each([
    '2026-W01-1',
    '2026-W53-7',
    '20260101T000000Z',
    '2026-01-01T00:00:00,5Z',
    '2026',
    '2026-01',
    '2026-001',
    '2026-01-01T00Z',
    '2026-01-01T00:00:00-23:59',
    '2026-01-01T00:00:00+14:30',
    '2026-01-01T00:00:00+0300',
    '2026-01-01T00:00:00',
    '2026-01-01 00:00:00Z',
    '2026-01-01t00:00:00z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T23:59:60Z',
    '2026-02-29T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '+002026-01-01T00:00:00Z',
    '2026-01-01T00:00:00.1234567Z',
    ' 2026-01-01T00:00:00Z',
    'now',
    '',
  ])('refuses %p as a time', (text) => {
    expect(parseTime(text)).toBeNull();
    expect(parseDateTime(text, 'timeOrDay')).toBeNull();
  });

  it('takes a calendar day where a day is asked, as its UTC midnight', () => {
    expect(parseDay('2026-12-01')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(parseDay('0099-03-01')?.toISOString()).toBe('0099-03-01T00:00:00.000Z');
    expect(parseDateTime('2026-12-01', 'timeOrDay')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(parseDateTime('2026-12-01', 'time')).toBeNull();
    for (const bad of ['2026-02-30', '2026-13-01', '0000-01-01', '2026-1-1', '20261201', '2026-W49-2', 12])
      expect(parseDay(bad)).toBeNull();
  });
});
