/**
 * The path of a request target exactly as the router routes it (shared/API.md, Limits: every
 * edge check reads the path as the router routes it, decoded and normalised once). As Fastify's
 * router (find-my-way's safeDecodeURI) reads it: the absolute form (`http://host/api/v1/…`) is
 * its path; the path ends at the first `?` or `#`; percent-encoding is decoded as decodeURI does
 * (`%61` is `a`; `%2F`, `%3F` and the other reserved characters stay encoded) except that `%25`
 * stays `%25`. Routing is case-sensitive and strict (no trailing-slash or duplicate-slash folding:
 * src/bootstrap.ts), so nothing else is folded. A target the router cannot decode (bad
 * percent-encoding) is the router's 400 whatever the edge says: its undecoded path is returned.
 */
export function routedPath(url: string): string {
  const target = url.charCodeAt(0) === 47 /* '/' */ ? url : absolutePath(url);
  const cut = target.search(/[?#]/);
  const path = cut < 0 ? target : target.slice(0, cut);
  if (!path.includes('%')) return path;
  try {
    return decodeURI(path.replace(/%25/g, '%2525'));
  } catch {
    return path;
  }
}

/** The path of an absolute-form target, as find-my-way reads it (`http://h:1/p?q` is `/p?q`). */
function absolutePath(url: string): string {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return url;
  const scheme = url.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return url;
  const rest = url.slice(schemeEnd + 3);
  const end = rest.search(/[/?#]/);
  if (end < 0) return '/';
  return rest[end] === '/' ? rest.slice(end) : `/${rest.slice(end)}`;
}
