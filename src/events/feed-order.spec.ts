import { orderForFeed, type Unpositioned } from './feed-order';

const ev = (id: string, obj: string, sequence: number): Unpositioned => ({
  id,
  entity_type: 'invoice',
  entity_id: obj,
  sequence,
});

describe('orderForFeed', () => {
  it('keeps transaction-id order across objects', () => {
    const stable = [ev('1', 'a', 1), ev('2', 'b', 1), ev('3', 'a', 2)];
    expect(
      orderForFeed(stable, [
        { entity_type: 'invoice', entity_id: 'a', sequence: 1 },
        { entity_type: 'invoice', entity_id: 'b', sequence: 1 },
      ]),
    ).toEqual(['1', '2', '3']);
  });

  it("puts an object's events in sequence order whatever their ids", () => {
    const stable = [ev('9', 'a', 2), ev('2', 'b', 1), ev('5', 'a', 1)];
    expect(
      orderForFeed(stable, [
        { entity_type: 'invoice', entity_id: 'a', sequence: 1 },
        { entity_type: 'invoice', entity_id: 'b', sequence: 1 },
      ]),
    ).toEqual(['5', '2', '9']);
  });

  it('holds back an event whose earlier sequence is not committed yet', () => {
    const stable = [ev('9', 'a', 2), ev('2', 'b', 1)];
    expect(
      orderForFeed(stable, [
        { entity_type: 'invoice', entity_id: 'a', sequence: 1 },
        { entity_type: 'invoice', entity_id: 'b', sequence: 1 },
      ]),
    ).toEqual(['2']);
  });

  it('continues an object after its earlier events were positioned by an earlier run', () => {
    const stable = [ev('12', 'a', 4), ev('11', 'a', 3)];
    expect(orderForFeed(stable, [{ entity_type: 'invoice', entity_id: 'a', sequence: 3 }])).toEqual(
      ['11', '12'],
    );
  });
});
