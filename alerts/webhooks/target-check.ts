// Safe outbound targets: an absolute http(s) URL without credentials, whose host resolves only to
// public addresses (not loopback, private, link-local, carrier-grade NAT, multicast, unspecified
// or a cloud metadata address) unless WEBHOOK_ALLOW_PRIVATE_TARGETS=1. Checked at registration,
// and again at every delivery on the address actually connected to (send.ts pins it), which
// defeats a name that resolves to a public address first and a private one later.
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

const FORBIDDEN = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['fd00:ec2::', 32], ['64:ff9b::', 96]] as const) FORBIDDEN.addSubnet(net, bits, 'ipv6');

export class TargetForbidden extends Error {
  override name = 'TargetForbidden';
}

/** Whether an address may not be reached (an IPv4-mapped IPv6 address as its IPv4). */
export function forbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return FORBIDDEN.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's problem as a reason, or null: http(s), a host, no credentials, no fragment. */
export function urlProblem(text: string): string | null {
  if (!URL.canParse(text)) return 'an absolute http(s) URL';
  const u = new URL(text);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'an http: or https: URL';
  if (!u.hostname) return 'a URL with a host';
  if (u.username || u.password) return 'a URL without credentials';
  if (u.hash) return 'a URL without a fragment';
  return null;
}

/** The addresses the URL's host resolves to, each allowed; TargetForbidden otherwise. */
export async function allowedAddresses(url: URL, allowPrivate: boolean): Promise<{ address: string; family: number }[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const found = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  if (found.length === 0) throw new TargetForbidden(`${host} does not resolve`);
  if (!allowPrivate) {
    const bad = found.find((a) => forbiddenAddress(a.address));
    if (bad) throw new TargetForbidden(`${host} resolves to ${bad.address}, a loopback, private, link-local or metadata address`);
  }
  return found;
}
