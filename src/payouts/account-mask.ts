/**
 * How a recipient account is shown in responses and logs: a card number (13-19 digits, spaces
 * or dashes allowed) as its first 6 and last 4 digits, anything else as its last 4 characters.
 */
const CARD = /^\d{13,19}$/;

export function maskAccount(account: string): string {
  const compact = account.replace(/[\s-]/g, '');
  if (CARD.test(compact))
    return `${compact.slice(0, 6)}${'*'.repeat(compact.length - 10)}${compact.slice(-4)}`;
  if (compact.length <= 4) return '*'.repeat(compact.length);
  return `${'*'.repeat(Math.min(compact.length - 4, 8))}${compact.slice(-4)}`;
}
