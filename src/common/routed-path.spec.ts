import { routedPath } from './routed-path';

describe('routedPath: the path as the router routes it', () => {
  it.each([
    ['/api/v1/invoices', '/api/v1/invoices'],
    ['/%61pi/v1/invoices', '/api/v1/invoices'],
    ['/api/v1/%69nvoices?x=%61', '/api/v1/invoices'],
    ['/api/v1/payouts/%62atches', '/api/v1/payouts/batches'],
    ['/api%2Fv1/invoices', '/api%2Fv1/invoices'],
    ['/api/v1/%2561', '/api/v1/%2561'],
    ['/pay/x#frag', '/pay/x'],
    ['http://127.0.0.1:3000/api/v1/payouts?x', '/api/v1/payouts'],
    ['HTTP://h/%61dmin', '/admin'],
    ['http://h?x', '/'],
    ['/bad%E0%A4%A', '/bad%E0%A4%A'],
  ])('%s → %s', (url, path) => {
    expect(routedPath(url)).toBe(path);
  });
});
