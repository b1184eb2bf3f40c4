import { SHOP_EVENT_TYPES } from '../audit/shop-events';
import { NOT_EMITTED, TRIGGERS } from './triggers';

describe('events trigger', () => {
  it('has a flow for every shop event type the service emits, and none for a type it does not', () => {
    expect(SHOP_EVENT_TYPES.filter((t) => TRIGGERS[t] === undefined && NOT_EMITTED[t] === undefined)).toEqual([]);
    expect(Object.keys(TRIGGERS).filter((t) => !SHOP_EVENT_TYPES.includes(t))).toEqual([]);
    expect(Object.keys(NOT_EMITTED).filter((t) => !SHOP_EVENT_TYPES.includes(t) || TRIGGERS[t] !== undefined)).toEqual([]);
  });
});
