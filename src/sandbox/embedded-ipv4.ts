/**
 * The IPv4 addresses an IPv6 address carries, so that a webhook target written in IPv6 is judged
 * by the IPv4 address it reaches (webhook-targets.ts, docs/sandbox.md "Webhook targets"):
 * - IPv4-mapped `::ffff:a.b.c.d` (::ffff:0:0/96) and IPv4-compatible `::a.b.c.d` (::/96, other
 *   than `::` and `::1`): the last 32 bits;
 * - IPv4-translated `::ffff:0:a.b.c.d` (::ffff:0:0:0/96, RFC 6145): the last 32 bits;
 * - NAT64 `64:ff9b::a.b.c.d` (64:ff9b::/96, RFC 6052): the last 32 bits; the local-use prefix
 *   64:ff9b:1::/48 (RFC 8215) may be used with any RFC 6052 prefix length from /48 to /96, so an
 *   address there carries one candidate per length (/48, /56, /64, /96, those not all zero) and
 *   every one is judged;
 * - 6to4 `2002:aabb:ccdd::` (2002::/16, RFC 3056): bits 16 to 47.
 * The addresses are parsed by ipaddr.js; only the positions of the embedded bits are written here.
 */
import ipaddr from 'ipaddr.js';

/** RFC 6052, section 2.2: the bytes holding the IPv4 address for each prefix length (byte 8 is `u`). */
const NAT64_POSITIONS: Readonly<Record<number, readonly number[]>> = {
  48: [6, 7, 9, 10],
  56: [7, 9, 10, 11],
  64: [9, 10, 11, 12],
  96: [12, 13, 14, 15],
};

const LAST_32_BITS = NAT64_POSITIONS[96]!;

function ipv4At(bytes: readonly number[], positions: readonly number[]): string {
  return positions.map((index) => bytes[index]).join('.');
}

function allZero(bytes: readonly number[], from: number, to: number): boolean {
  for (let index = from; index < to; index++) if (bytes[index] !== 0) return false;
  return true;
}

/**
 * The IPv4 addresses embedded in `address` (an IPv6 address without brackets), as dotted quads;
 * empty for an IPv4 address, an IPv6 address of no embedding form, or a string that is no address.
 */
export function embeddedIpv4(address: string): string[] {
  if (!ipaddr.IPv6.isValid(address)) return [];
  const bytes = ipaddr.IPv6.parse(address).toByteArray();
  // ::/96 and ::ffff:0:0/96; ipaddr.js reads `::a.b.c.d` as mapped, so the bytes decide.
  if (allZero(bytes, 0, 10)) {
    const mapped = bytes[10] === 0xff && bytes[11] === 0xff;
    // `::` and `::1` are the unspecified and loopback addresses, not IPv4-compatible ones.
    const compatible = bytes[10] === 0 && bytes[11] === 0 && !(allZero(bytes, 12, 15) && bytes[15]! <= 1);
    if (mapped || compatible) return [ipv4At(bytes, LAST_32_BITS)];
  }
  // ::ffff:0:0:0/96
  if (allZero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) {
    return [ipv4At(bytes, LAST_32_BITS)];
  }
  // 64:ff9b::/96
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    if (allZero(bytes, 4, 12)) return [ipv4At(bytes, LAST_32_BITS)];
    // 64:ff9b:1::/48
    // 64:ff9b:1::/48: a layout whose IPv4 bits are all zero is not the one in use.
    if (bytes[4] === 0 && bytes[5] === 1) {
      return Object.values(NAT64_POSITIONS)
        .map((positions) => ipv4At(bytes, positions))
        .filter((candidate) => candidate !== '0.0.0.0');
    }
  }
  // 2002::/16
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return [ipv4At(bytes, [2, 3, 4, 5])];
  return [];
}
