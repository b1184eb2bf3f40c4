import type { TestContext } from '../support/app';

/** The console's cookies across requests, as a browser keeps them (by name, latest wins). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(setCookie: string[] | string | undefined): void {
    for (const c of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /Max-Age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** A hidden form field's value from a page (the first one with that name). */
export function hidden(html: string, name: string): string {
  const marker = `name="${name}" value="`;
  const at = html.indexOf(marker);
  if (at < 0) throw new Error(`no hidden field ${name}`);
  return html.slice(at + marker.length, html.indexOf('"', at + marker.length));
}

/** Signs in through the real form; returns the jar holding the session and the CSRF token. */
export async function signIn(
  ctx: TestContext,
  key: string,
): Promise<{ jar: CookieJar; csrf: string }> {
  const jar = new CookieJar();
  const form = await ctx.http.get('/admin/login').expect(200);
  jar.take(form.headers['set-cookie']);
  const res = await ctx.http
    .post('/admin/login')
    .set('Cookie', jar.header())
    .type('form')
    .send({ _csrf: hidden(form.text, '_csrf'), key })
    .expect(303);
  jar.take(res.headers['set-cookie']);
  const overview = await ctx.http.get('/admin').set('Cookie', jar.header()).expect(200);
  return { jar, csrf: hidden(overview.text, '_csrf') };
}
