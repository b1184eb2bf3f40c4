import { parseGatewayTime } from './gateway-time';

describe('parseGatewayTime', () => {
  it.each([
    ['2023-07-18T13:23:41', '+03:00', '2023-07-18T10:23:41.000Z'], // no offset: the gateway's +03:00
    ['2023-07-18T13:23:41', '+00:00', '2023-07-18T13:23:41.000Z'], // as configured
    ['2023-07-18 13:23:41', '+03:00', '2023-07-18T10:23:41.000Z'],
    ['2023-07-18T13:23:41+03:00', '+00:00', '2023-07-18T10:23:41.000Z'], // its own offset wins
    ['2023-07-18T13:23:41Z', '+03:00', '2023-07-18T13:23:41.000Z'],
    ['2023-07-18T13:23:41-0500', '+03:00', '2023-07-18T18:23:41.000Z'],
    ['2023-07-18T13:23:41.123456', '+03:00', '2023-07-18T10:23:41.123Z'],
    ['2023-07-18T13:23', '+03:00', '2023-07-18T10:23:00.000Z'],
  ])('%s (default %s) is %s', (text, offset, iso) => {
    expect(parseGatewayTime(text, offset)?.toISOString()).toBe(iso);
  });

  it.each([[null], [undefined], [''], ['yesterday'], ['2023-13-45T99:00:00'], [1689676221]])(
    '%p is no time',
    (text) => expect(parseGatewayTime(text, '+03:00')).toBeNull(),
  );
});
