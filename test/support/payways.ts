/**
 * Payways of the sandbox's default catalogue (src/sandbox/catalogue.json), exactly as it lists
 * them: like the real test server, each alias carries its scenario in square brackets and is a
 * payway of its own. `mock_server` scenarios are the test server's names; `sandbox` ones are the
 * sandbox's extras. Tests name payways only through these constants.
 */

const CARD_RUB = 'card_core_payin_rub';
const WALLET_RUB = 'qiwi_wallet_rub';
const TO_CARD = 'qiwi_topup_rub_to_card';
const TO_WALLET = 'qiwi_topup_rub_to_wallet';

/** Payment payways (shop_input_config/shop). */
export const PAYMENT = {
  /** Card, RUB: GET to a checkout URL with session_id; the payer pays on the sandbox's page; notified. */
  card: `${CARD_RUB}[mock_server,success_with_callback]`,
  /** Card, RUB: paid at once without the payer, no notification. */
  cardSuccess: `${CARD_RUB}[mock_server,success]`,
  /** Card, RUB: rejected at once, notified. */
  cardRejected: `${CARD_RUB}[mock_server,rejected_with_callback]`,
  /** Card, RUB: invoice/create refused (code 10); the rejection is notified. */
  cardCreateDeclined: `${CARD_RUB}[mock_server,create_declined_with_callback]`,
  /** Card, RUB: HTTP 500, nothing done. */
  cardServerError: `${CARD_RUB}[mock_server,internal_server_error]`,
  /** Card, RUB: the answer times out, nothing done. */
  cardTimeout: `${CARD_RUB}[mock_server,timeout_error]`,
  /** Card, USD (fee 3.5% + 0.3). */
  cardUsd: 'card_core_payin_usd[mock_server,success_with_callback]',
  /** Card, USD: paid at once, no notification. */
  cardUsdSuccess: 'card_core_payin_usd[mock_server,success]',
  /** Wallet, RUB, `phone` add-on: GET to the payer page; notified. */
  wallet: `${WALLET_RUB}[mock_server,success_with_callback]`,
  /** Wallet, RUB: paid at once, no notification. */
  walletSuccess: `${WALLET_RUB}[mock_server,success]`,
  /** Wallet, RUB: rejected at once, no notification. */
  walletRejected: `${WALLET_RUB}[mock_server,rejected]`,
  /** Wallet, RUB: rejected at once, notified. */
  walletRejectedWithCallback: `${WALLET_RUB}[mock_server,rejected_with_callback]`,
  /** Listed with `is_active: false`. */
  inactive: 'old_wallet_rub[sandbox,success]',
  /** The sandbox's extra scenarios on the RUB card payway (payer page unless the name says otherwise). */
  sandboxCard: (
    scenario:
      | 'pending'
      | 'nonfatal'
      | 'fatal'
      | 'timeout_done'
      | 'timeout_not_done'
      | 'reset'
      | 'reset_done'
      | 'dup_notify'
      | 'out_of_order'
      | 'notify_none'
      | 'refund_failed'
      | 'post_redirect',
  ): string => `${CARD_RUB}[sandbox,${scenario}]`,
} as const;

/** Payout payways (shop_output_config/shop). */
export const PAYOUT = {
  /** To a card (16–19 digits), RUB: sent (3) at once, then success (5). */
  card: `${TO_CARD}[mock_server,success]`,
  /** To a card: withdraw/create refused (code 10). */
  cardForbidden: `${TO_CARD}[mock_server,payment_forbidden]`,
  /** To a wallet (phone), RUB: sent, then success. */
  wallet: `${TO_WALLET}[mock_server,success]`,
  /** To a wallet: sent, then rejected (6). */
  walletFail: `${TO_WALLET}[mock_server,fail]`,
  /** To a wallet: HTTP 500, nothing done. */
  walletServerError: `${TO_WALLET}[mock_server,internal_server_error]`,
  /** To a wallet: check_account says no; withdraw/create refused (code 10). */
  walletMissing: `${TO_WALLET}[mock_server,wallet_does_not_exist]`,
  /** The sandbox's extra scenarios on the card payout payway. */
  sandboxCard: (
    scenario:
      | 'pending'
      | 'never_final'
      | 'slow_final'
      | 'reject'
      | 'decline'
      | 'nonfatal'
      | 'fatal'
      | 'timeout_done'
      | 'timeout_not_done'
      | 'reset'
      | 'reset_done',
  ): string => `${TO_CARD}[sandbox,${scenario}]`,
} as const;
