import { createHash } from 'node:crypto';
import { signNotificationFields, verifyNotification } from './notification-signature';
import { PAYMENT } from '../../test/support/payways';

const SECRET = 'notify-secret';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const JSON_TYPE = 'application/json; charset=utf-8';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Sign string written out by hand from the spec's rule: keys sorted, values as transmitted. */
const SIGN_STRING =
  `Tea:12345:${PAYMENT.card}:{"payment_token":"tok"}:100.0:643:1001:order-1:0:success:` +
  '2026-11-21T17:23:41+03:00';

function jsonBody(sign: string, extra = ''): string {
  return (
    `{"shop_id":1001,"shop_order_id":"order-1","description":"Tea","shop_amount":100.0,` +
    `"shop_refund":0,"shop_currency":643,"payment_id":12345,"payway":"${PAYMENT.card}",` +
    `"ps_data":"{\\"payment_token\\":\\"tok\\"}","status":"success","addons":"",` +
    `"client_price":null,"updated":"2026-11-21T17:23:41+03:00"${extra},"sign":"${sign}"}`
  );
}

describe('verifyNotification', () => {
  const sign = sha256(SIGN_STRING + SECRET);

  it('accepts a JSON body signed over the exact transmitted text (100.0 stays 100.0)', () => {
    const check = verifyNotification(Buffer.from(jsonBody(sign)), JSON_TYPE, SECRET);
    expect(check.valid).toBe(true);
    expect(check.error).toBeUndefined();
    expect(check.fields).toMatchObject({ shop_amount: '100.0', shop_refund: '0', shop_id: '1001' });
    expect(check.fields).not.toHaveProperty('sign');
  });

  it('picks the secret by the shop_id the notification names; a shop not ours has none', () => {
    const secrets: Record<string, string> = { '1001': SECRET, '1002': 'agent-secret' };
    const secretOf = (shopId: string | undefined) =>
      shopId === undefined ? undefined : secrets[shopId];
    expect(verifyNotification(jsonBody(sign), JSON_TYPE, secretOf)).toMatchObject({ valid: true });
    const agentSigned = sha256(SIGN_STRING + 'agent-secret');
    expect(verifyNotification(jsonBody(agentSigned), JSON_TYPE, secretOf)).toMatchObject({
      valid: false,
      error: 'bad sign',
    });
    const other = jsonBody(sign).replace('"shop_id":1001', '"shop_id":9999');
    expect(verifyNotification(other, JSON_TYPE, secretOf)).toMatchObject({
      valid: false,
      unknownShop: true,
      error: 'shop_id 9999 is not a configured shop',
    });
  });

  it('rejects a body with one changed character', () => {
    const tampered = jsonBody(sign).replace('100.0', '100.1');
    expect(verifyNotification(tampered, JSON_TYPE, SECRET)).toMatchObject({ valid: false });
  });

  it('rejects a wrong secret, a missing sign and a sign of another length', () => {
    expect(verifyNotification(jsonBody(sign), JSON_TYPE, 'other').valid).toBe(false);
    expect(
      verifyNotification(jsonBody(sign).replace(/,"sign":"\w+"/, ''), JSON_TYPE, SECRET),
    ).toMatchObject({
      valid: false,
      error: 'missing sign',
    });
    expect(verifyNotification(jsonBody('abc'), JSON_TYPE, SECRET).valid).toBe(false);
  });

  it('tolerates an added unknown field, which takes part in the signature', () => {
    // "new_field" sorts between "description" and "payment_id".
    const withNew = SIGN_STRING.replace('Tea:', 'Tea:{"a":[1.50,true]}:');
    const body = jsonBody(sha256(withNew + SECRET), ',"new_field":{"a":[1.50,true]}');
    expect(verifyNotification(body, JSON_TYPE, SECRET)).toMatchObject({ valid: true });
  });

  it('accepts a form body; empty values are skipped, zero is kept', () => {
    const fields = {
      shop_id: '1001',
      shop_amount: '100.00',
      shop_refund: '0',
      ps_currency: '643',
      addons: '',
      status: 'success',
    };
    const formSign = sha256('643:100.00:1001:0:success' + SECRET);
    expect(signNotificationFields(fields, SECRET)).toBe(formSign);
    const body = new URLSearchParams({ ...fields, sign: formSign }).toString();
    expect(verifyNotification(body, FORM_TYPE, SECRET)).toEqual({
      valid: true,
      fields,
    });
    const changed = new URLSearchParams({ ...fields, shop_refund: '0.00', sign: formSign });
    expect(verifyNotification(changed.toString(), FORM_TYPE, SECRET).valid).toBe(false);
  });

  it('signs non-string fields as their text', () => {
    expect(signNotificationFields({ a: 1001, b: true, c: null, d: '' }, SECRET)).toBe(
      sha256('1001:true' + SECRET),
    );
  });

  it('answers valid:false with an error for a body it cannot read', () => {
    const check = verifyNotification('{"shop_id":', JSON_TYPE, SECRET);
    expect(check.valid).toBe(false);
    expect(check.error).toMatch(/^unreadable notification/);
    expect(verifyNotification('[1]', JSON_TYPE, SECRET).valid).toBe(false);
    expect(verifyNotification('a=1', 'text/plain', SECRET).valid).toBe(false);
  });
});
