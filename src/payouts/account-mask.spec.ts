import { maskAccount } from './account-mask';

describe('maskAccount', () => {
  it.each([
    ['4111111111111111', '411111******1111'],
    ['4111 1111 1111 1111', '411111******1111'],
    ['2200123456789012345', '220012*********2345'],
    ['+79161234567', '********4567'],
    ['79161234567', '*******4567'],
    ['user@example.com', '********.com'],
    ['abc', '***'],
    ['abcd', '****'],
  ])('%s -> %s', (account, masked) => {
    expect(maskAccount(account)).toBe(masked);
  });

  it('never shows more than the last 4 characters of a non-card account', () => {
    expect(maskAccount('secret-login-name')).toMatch(/^\*+name$/);
  });
});
