/**
 * Which URLs the sandbox sends webhooks to (docs/sandbox.md, "Webhook targets").
 *
 * Always refused, wherever a webhook URL is accepted: anything but an absolute http(s) URL, and a
 * URL with credentials (`http://user:password@host/...`): fetch cannot send them, and a password in a
 * URL ends up in logs. By default also refused (`--allow-any-webhook-target` /
 * `PAYLATER_ALLOW_ANY_WEBHOOK_TARGET=1` allows them):
 * - the sandbox itself: a loopback or unspecified address, the address it listens on (any local
 *   interface when it listens on a wildcard address), or its public URL's host, at its port, any
 *   path: a webhook must not act on the sandbox (confirm another transaction). On the shared store
 *   the same for every other live process of the sandbox ({@link WebhookTargets.othersAt}: each
 *   registers its addresses in the database, postgres/store.ts), at its port;
 * - link-local addresses (169.254.0.0/16, fe80::/10) and cloud metadata endpoints (169.254.169.254,
 *   fd00:ec2::254, 100.100.100.200, metadata.google.internal, ...);
 * - the unspecified addresses 0.0.0.0 and :: (they reach this machine).
 * Loopback and private addresses at other ports stay allowed: this is a local development tool.
 * An IPv6 address that embeds an IPv4 address (`::ffff:a.b.c.d`, `::a.b.c.d`, `::ffff:0:a.b.c.d`,
 * `64:ff9b::a.b.c.d`, 64:ff9b:1::/48, 6to4 2002::/16: embedded-ipv4.ts) is judged by that IPv4
 * address as well as by itself.
 *
 * A URL is checked twice: as written when it is accepted ({@link WebhookTargets.problem}: 400 for a
 * request, a start-up error for `--webhook-url`), and before every delivery attempt with its host
 * name resolved ({@link WebhookTargets.resolvedProblem}), so a DNS name that points at a refused
 * address is refused too. Resolutions are cached for a minute; a name whose address changes between
 * the check and fetch's own resolution (DNS rebinding) is not caught — acceptable for a local tool.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { embeddedIpv4 } from './embedded-ipv4.js';
import { shownWebhookUrl } from './shown-url.js';

/** Why a URL is refused: a sentence for the error message (never the URL itself) and a field issue. */
export interface TargetProblem {
  /** A sentence completing "The webhook URL ..." */
  message: string;
  /** A short issue for the `details` of a 400. */
  issue: string;
}

const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

const METADATA_ADDRESSES = new BlockList();
METADATA_ADDRESSES.addAddress('169.254.169.254', 'ipv4');
METADATA_ADDRESSES.addAddress('169.254.170.2', 'ipv4');
METADATA_ADDRESSES.addAddress('100.100.100.200', 'ipv4');
METADATA_ADDRESSES.addAddress('fd00:ec2::254', 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const UNSPECIFIED = new Set(['0.0.0.0', '::']);

/** `[::1]` -> `::1`; `localhost.` -> `localhost`; lower case. */
function bareHost(hostname: string): string {
  const unbracketed = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return unbracketed.toLowerCase().replace(/\.$/, '');
}

/**
 * An address with an IPv4 address embedded (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64,
 * 6to4: embedded-ipv4.ts) as that IPv4 address (the first, when the form allows several); anything
 * else unchanged.
 */
function unmapped(address: string): string {
  return embeddedIpv4(address)[0] ?? address;
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

const defaultPort = (url: URL): number => (url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port));

export interface ListeningAddress {
  /** The address the server listens on (`server.address().address`). */
  address: string;
  port: number;
  /** The configured public URL, if any. */
  publicUrl?: string | undefined;
  /**
   * Another process's local interface addresses, when it listens on a wildcard address (this
   * process's own are read from its interfaces).
   */
  interfaces?: string[] | undefined;
}

/** Whether a value read back from the database is a {@link ListeningAddress}. */
export function isListeningAddress(value: unknown): value is ListeningAddress {
  const candidate = value as Partial<ListeningAddress> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.address === 'string' && typeof candidate.port === 'number';
}

/** Where this process listens, as the other processes of a shared sandbox are told of it. */
export function announcedAddress(address: ListeningAddress): ListeningAddress {
  const announced: ListeningAddress = { address: address.address, port: address.port, publicUrl: address.publicUrl };
  if (UNSPECIFIED.has(unmapped(address.address))) announced.interfaces = [...localInterfaceAddresses()];
  return announced;
}

function localInterfaceAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) addresses.add(unmapped(entry.address.toLowerCase()));
  }
  return addresses;
}

export class WebhookTargets {
  private own: ListeningAddress | undefined;
  /** The other live processes of a shared sandbox (empty in memory). */
  private others: ListeningAddress[] = [];
  private localAddresses: Set<string> | undefined;
  private readonly resolved = new Map<string, { addresses: string[]; until: number }>();

  constructor(
    private readonly options: {
      allowAny: boolean;
      /** Resolves a host name to its addresses (default: the system's resolver, dns.lookup). */
      lookup?: (host: string) => Promise<string[]>;
    },
  ) {}

  get allowAny(): boolean {
    return this.options.allowAny;
  }

  /** Tells where the sandbox listens, once it does. */
  listeningAt(address: ListeningAddress): void {
    this.own = address;
    this.localAddresses = undefined;
  }

  /** Tells where the other live processes of a shared sandbox listen (replacing what was told before). */
  othersAt(addresses: ListeningAddress[]): void {
    this.others = addresses;
  }

  /** This process and the others, those that listen. */
  private sandboxes(): ListeningAddress[] {
    return this.own === undefined ? this.others : [this.own, ...this.others];
  }

  /** What is wrong with a webhook URL as written, or undefined when it may be used. */
  problem(value: string): TargetProblem | undefined {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { message: 'is not an absolute URL.', issue: 'must be an absolute http or https URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return { message: 'must be an http or https URL.', issue: 'must be an absolute http or https URL' };
    }
    if (url.username !== '' || url.password !== '') {
      return {
        message:
          'must not contain credentials (user:password@): they cannot be sent and would be exposed. Authenticate webhooks with X-Signature, or put a token in the path.',
        issue: 'must not contain user:password@',
      };
    }
    if (this.options.allowAny) return undefined;
    const host = bareHost(url.hostname);
    if (METADATA_NAMES.has(host)) return metadataProblem();
    const port = defaultPort(url);
    if (isIP(host) !== 0) return this.addressProblem(host, port);
    if ((host === 'localhost' || host.endsWith('.localhost')) && this.isOwnPort(port)) return ownProblem();
    for (const sandbox of this.sandboxes()) {
      if (sandbox.publicUrl === undefined) continue;
      const pub = new URL(sandbox.publicUrl);
      if (bareHost(pub.hostname) === host && defaultPort(pub) === port) return ownProblem();
    }
    return undefined;
  }

  /**
   * The check before a delivery attempt: {@link problem}, then every address the host name resolves
   * to. A name that does not resolve is not a problem here (the attempt fails as the receiver's).
   */
  async resolvedProblem(value: string): Promise<TargetProblem | undefined> {
    const first = this.problem(value);
    if (first !== undefined || this.options.allowAny) return first;
    const url = new URL(value);
    const host = bareHost(url.hostname);
    if (isIP(host) !== 0) return undefined;
    const port = defaultPort(url);
    for (const address of await this.resolve(host)) {
      const found = this.addressProblem(address, port);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * The problem of an address: of each IPv4 address it embeds (an IPv6 address of an embedding
   * form is judged by the IPv4 address it reaches), else of the address itself.
   */
  private addressProblem(raw: string, port: number): TargetProblem | undefined {
    for (const address of embeddedIpv4(raw)) {
      const found = this.plainAddressProblem(address, port);
      if (found !== undefined) return found;
    }
    return this.plainAddressProblem(raw, port);
  }

  private plainAddressProblem(address: string, port: number): TargetProblem | undefined {
    const type = family(address);
    if (METADATA_ADDRESSES.check(address, type)) return metadataProblem();
    if (LINK_LOCAL.check(address, type)) {
      return {
        message: 'points at a link-local address (169.254.0.0/16, fe80::/10), which the sandbox refuses as a webhook target.',
        issue: 'must not be a link-local address',
      };
    }
    if (UNSPECIFIED.has(address)) {
      return { message: 'points at 0.0.0.0 or ::, which is not the address of a receiver.', issue: 'must not be an unspecified address' };
    }
    for (const sandbox of this.sandboxes()) {
      if (sandbox.port === port && this.isAddressOf(sandbox, address)) return ownProblem();
    }
    return undefined;
  }

  private isOwnPort(port: number): boolean {
    return this.sandboxes().some((sandbox) => sandbox.port === port);
  }

  /**
   * Whether `address` reaches `sandbox`: a loopback address (another process may be on this machine
   * or, behind a proxy, on another one; refused either way), the address it listens on, or, when
   * it listens on a wildcard address, one of its machine's interfaces.
   */
  private isAddressOf(sandbox: ListeningAddress, address: string): boolean {
    if (LOOPBACK.check(address, family(address))) return true;
    const listening = unmapped(sandbox.address);
    if (address === listening) return true;
    if (!UNSPECIFIED.has(listening)) return false;
    return sandbox === this.own ? this.local().has(address) : (sandbox.interfaces ?? []).includes(address);
  }

  private local(): Set<string> {
    this.localAddresses ??= localInterfaceAddresses();
    return this.localAddresses;
  }

  private async resolve(host: string): Promise<string[]> {
    const now = Date.now();
    const cached = this.resolved.get(host);
    if (cached !== undefined && cached.until > now) return cached.addresses;
    let addresses: string[] = [];
    try {
      addresses = this.options.lookup
        ? (await this.options.lookup(host)).map((address) => address.toLowerCase())
        : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address.toLowerCase());
    } catch {
      addresses = [];
    }
    // A small cache: receivers are few.
    if (this.resolved.size >= 1000) this.resolved.clear();
    this.resolved.set(host, { addresses, until: now + 60_000 });
    return addresses;
  }
}

function metadataProblem(): TargetProblem {
  return {
    message: 'points at a cloud metadata endpoint, which the sandbox refuses as a webhook target.',
    issue: 'must not be a cloud metadata address',
  };
}

function ownProblem(): TargetProblem {
  return {
    message:
      "points at the sandbox itself (the address and port of one of its processes): a webhook must go to your receiver, not act on the sandbox.",
    issue: "must not be the sandbox's own address",
  };
}

/** A webhook URL for logs: scheme, host and port and a fingerprint of the whole URL (shown-url.ts). */
export function safeUrl(url: string | null | undefined): string {
  return shownWebhookUrl(url);
}

/**
 * The host another process of a shared sandbox connects to, to reach a process that announced
 * `address`: its own address, or, when it listens on a wildcard address, the loopback address when
 * it runs on this machine (it has one of this machine's interface addresses), else its first
 * interface address.
 */
export function connectHost(address: ListeningAddress): string {
  const listening = unmapped(address.address);
  if (!UNSPECIFIED.has(listening)) return listening;
  const interfaces = address.interfaces ?? [];
  const local = localInterfaceAddresses();
  if (interfaces.length === 0 || interfaces.some((entry) => local.has(entry))) return listening === '::' ? '::1' : '127.0.0.1';
  return interfaces.find((entry) => !entry.startsWith('127.') && entry !== '::1') ?? interfaces[0]!;
}
