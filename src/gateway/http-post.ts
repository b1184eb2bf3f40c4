import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';

/** The gateway's answer as received: HTTP status and the body as text (parsed exactly later). */
export interface PostAnswer {
  status: number;
  data: string;
}

export interface PostOptions {
  /** The whole exchange, connect to last byte; past it the outcome is unknown (`ETIMEDOUT`). */
  timeoutMs: number;
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
}

/**
 * One POST over node:http(s) with a keep-alive agent (the gateway client without
 * axios' per-request configuration merging; the profile showed it). No redirects are followed,
 * every status is an answer, the body is text. Errors keep Node's `code` and `syscall`, which is
 * what the client classifies into "never sent" and "outcome unknown".
 */
export function postText(
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<PostAnswer> {
  const https = url.protocol === 'https:';
  return new Promise<PostAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: PostAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const req = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: https ? opts.httpsAgent : opts.httpAgent,
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          finish(null, { status: res.statusCode ?? 0, data: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (e) => finish(e));
        // The connection closed before the body ended: the gateway may have acted.
        res.on('close', () => {
          if (!res.complete) finish(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        });
      },
    );
    const timer = setTimeout(
      () =>
        finish(Object.assign(new Error(`timeout of ${opts.timeoutMs}ms exceeded`), { code: 'ETIMEDOUT' })),
      opts.timeoutMs,
    );
    req.on('error', (e) => finish(e));
    req.end(body);
  });
}
