import { parsePayway } from './faults';

describe('parsePayway', () => {
  it.each([
    ['card_core_payin_rub[mock_server,success]', undefined, ['success']],
    [
      'card_core_payin_rub[mock_server,success_with_callback]',
      undefined,
      ['success_with_callback'],
    ],
    ['card_core_payin_rub[mock_server,internal_server_error]', 'http500', []],
    ['card_core_payin_rub[mock_server,timeout_error]', 'timeout_not_done', []],
    [
      'qiwi_topup_rub_to_wallet[mock_server,wallet_does_not_exist]',
      undefined,
      ['wallet_does_not_exist'],
    ],
    ['card_core_payin_rub[sandbox,timeout_done]', 'timeout_done', []],
    ['card_core_payin_rub[sandbox,dup_notify]', undefined, ['dup_notify']],
    ['card_core_payin_rub', undefined, []],
    ['card_core_payin_rub[mock_server,no_such_scenario]', undefined, []],
  ])('%s: fault %s, scenarios %j', (alias, fault, scenarios) => {
    const choice = parsePayway(alias);
    expect(choice.requested).toBe(alias);
    expect(choice.fault).toBe(fault);
    expect([...choice.scenarios]).toEqual(scenarios);
  });
});
