import { isIP } from 'node:net';

/**
 * What a TRUST_PROXY list may hold. A trusted range is believed when it says who the client is
 * (X-Forwarded-For), so a range that holds ordinary clients lets them pick their own address —
 * and pass the gateway's address allow-list. Refused (unless TRUST_PROXY_ALLOW_WIDE=true): any
 * single range wider than /8 (IPv4) or /32 (IPv6), and any list whose ranges together cover every
 * IPv4 or every IPv6 address. An IPv4-mapped IPv6 range (`::ffff:0:0/96`) counts as the IPv4
 * range it maps, and any IPv6 range overlapping the mapped block counts toward IPv4 as well.
 */

/** proxy-addr presets (Fastify's trustProxy), by what they stand for: a name is no way around the rule. */
const PRESETS: Record<string, readonly string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

const WIDEST = { 4: 8, 6: 32 } as const;
const V4_ALL = (1n << 32n) - 1n;
const V6_ALL = (1n << 128n) - 1n;
/** ::ffff:0:0/96, the IPv4-mapped block. */
const MAPPED_LO = 0xffffn << 32n;
const MAPPED_HI = MAPPED_LO + V4_ALL;

interface Range {
  family: 4 | 6;
  lo: bigint;
  hi: bigint;
  bits: number;
}

/** Why the entry cannot be trusted, or null when it may. `entries`: trimmed, already well-formed. */
export function wideTrustProblem(entries: readonly string[]): string | null {
  const ranges: Range[] = [];
  let wide: string | null = null;
  for (const entry of entries) {
    for (const cidr of PRESETS[entry] ?? [entry]) {
      const r = asRange(cidr);
      if (wide === null && r.bits < WIDEST[r.family]) {
        const shown = PRESETS[entry] ? `${entry} (${cidr})` : entry;
        wide = `holds ${shown}, wider than /${WIDEST[r.family]} for IPv${r.family}: any client in it could choose its own address (set TRUST_PROXY_ALLOW_WIDE=true if that is really meant)`;
      }
      ranges.push(r);
      if (r.family === 6 && r.lo <= MAPPED_HI && r.hi >= MAPPED_LO) {
        const lo = (r.lo > MAPPED_LO ? r.lo : MAPPED_LO) - MAPPED_LO;
        const hi = (r.hi < MAPPED_HI ? r.hi : MAPPED_HI) - MAPPED_LO;
        ranges.push({ family: 4, lo, hi, bits: 32 });
      }
    }
  }
  for (const family of [4, 6] as const) {
    if (
      coversAll(
        ranges.filter((r) => r.family === family),
        family === 4 ? V4_ALL : V6_ALL,
      )
    ) {
      return `covers every IPv${family} address: any client could choose its own address (set TRUST_PROXY_ALLOW_WIDE=true if that is really meant)`;
    }
  }
  return wide;
}

/** Whether `entry` is a preset name proxy-addr understands. */
export function isTrustPreset(entry: string): boolean {
  return Object.prototype.hasOwnProperty.call(PRESETS, entry);
}

function coversAll(ranges: Range[], all: bigint): boolean {
  const sorted = [...ranges].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  let next = 0n;
  for (const r of sorted) {
    if (r.lo > next) return false;
    if (r.hi + 1n > next) next = r.hi + 1n;
    if (next > all) return true;
  }
  return false;
}

/** `addr` or `addr/bits` (validated by the caller) as an interval; IPv4-mapped IPv6 → IPv4. */
function asRange(cidr: string): Range {
  const [addr, bitsText] = cidr.split('/');
  const family = isIP(addr) === 4 ? 4 : 6;
  const value = family === 4 ? v4(addr) : v6(addr);
  const bits = bitsText === undefined ? (family === 4 ? 32 : 128) : Number(bitsText);
  if (family === 6 && bits >= 96 && value >= MAPPED_LO && value <= MAPPED_HI) {
    return interval(4, value - MAPPED_LO, bits - 96);
  }
  return interval(family, value, bits);
}

function interval(family: 4 | 6, value: bigint, bits: number): Range {
  const width = BigInt((family === 4 ? 32 : 128) - bits);
  const lo = (value >> width) << width;
  return { family, lo, hi: lo + (1n << width) - 1n, bits };
}

function v4(addr: string): bigint {
  return addr.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6(text: string): bigint {
  let addr = text.split('%')[0].toLowerCase();
  const dot = addr.lastIndexOf(':');
  if (addr.includes('.')) {
    // An embedded IPv4 tail is two groups.
    const tail = v4(addr.slice(dot + 1));
    addr = `${addr.slice(0, dot + 1)}${(tail >> 16n).toString(16)}:${(tail & 0xffffn).toString(16)}`;
  }
  const [head, rest] = addr.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...restGroups];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}
