import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';

/**
 * X.509 certificates made in process: ECDSA P-256 keys, SHA-256 signatures. Node can sign but
 * not build X.509, so the few DER structures a certificate needs are written here rather than
 * pulling a PKI library into the operator. Used for the metrics and webhook servers' self-signed
 * certificates and for the certificate authorities and member certificates of etcd clusters.
 *
 * Only a runtime module loads this (it needs `node:crypto`); the constructs entry never does.
 */

/** What a certificate may be used for (extKeyUsage): serving TLS, presenting as a TLS client, or both. */
export type CertificateUsage = 'server' | 'client';

/** A certificate and its private key, PEM-encoded. */
export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export interface CertificateRequest {
  /** The subject's common name. */
  readonly commonName: string;
  /** DNS names and IP addresses (IPv4) it is valid for. @default none */
  readonly hosts?: readonly string[];
  /** @default ['server'] (a CA has none) */
  readonly usages?: readonly CertificateUsage[];
  /** A certificate authority: may sign certificates, and is used for nothing else. @default false */
  readonly ca?: boolean;
  /** How long it is valid, from a minute ago. */
  readonly validForMs: number;
  /** The CA that signs it. @default self-signed */
  readonly issuer?: KeyPair;
  /** Its key pair. @default a new P-256 key */
  readonly key?: string;
  /** When it starts, less a minute for clocks behind. @default now */
  readonly now?: Date;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const EXT_KEY_USAGE: Record<CertificateUsage, string> = {
  server: '1.3.6.1.5.5.7.3.1',
  client: '1.3.6.1.5.5.7.3.2',
};

/** Issues a certificate (self-signed, or signed by `issuer`). */
export function issueCertificate(request: CertificateRequest): KeyPair {
  const privateKey: KeyObject = request.key
    ? createPrivateKey(request.key)
    : generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const signingKey = request.issuer ? createPrivateKey(request.issuer.key) : privateKey;
  const subject = distinguishedName(request.commonName);
  const issuerName = request.issuer ? subjectOf(request.issuer.cert) : subject;
  const now = (request.now ?? new Date()).getTime();
  const validity = seq(time(new Date(now - 60_000)), time(new Date(now + request.validForMs)));
  const tbs = seq(
    tlv(0xa0, int(Buffer.from([2]))),
    int(serialNumber()),
    seq(oid(ECDSA_WITH_SHA256)),
    issuerName,
    validity,
    subject,
    spki,
    tlv(0xa3, seq(...extensions(request, spki))),
  );
  const signature = sign('sha256', tbs, { key: signingKey, dsaEncoding: 'der' });
  const der = seq(tbs, seq(oid(ECDSA_WITH_SHA256)), tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return { cert: pem('CERTIFICATE', der), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/**
 * A self-signed serving certificate for DNS names and IPv4 addresses: what the metrics endpoint
 * (and the webhook server) serves when no certificate is mounted, as controller-runtime does.
 */
export function selfSignedCertificate(commonName: string, dnsNames: readonly string[], validDays = 365): KeyPair {
  return issueCertificate({ commonName, hosts: dnsNames, validForMs: validDays * 86_400_000 });
}

function extensions(request: CertificateRequest, spki: Buffer): Buffer[] {
  const critical = tlv(0x01, Buffer.from([0xff]));
  const keyId = subjectKeyId(spki);
  const list = [
    // basicConstraints, critical: a CA or not.
    seq(oid('2.5.29.19'), critical, octets(request.ca ? seq(tlv(0x01, Buffer.from([0xff]))) : seq())),
    // keyUsage, critical: a CA signs certificates; a leaf signs handshakes.
    seq(
      oid('2.5.29.15'),
      critical,
      octets(tlv(0x03, request.ca ? Buffer.from([0x01, 0x06]) : Buffer.from([0x07, 0x80]))),
    ),
    // subjectKeyIdentifier: how a verifier finds the issuer of what this CA signs.
    seq(oid('2.5.29.14'), octets(octets(keyId))),
  ];
  if (request.issuer) {
    // authorityKeyIdentifier: the issuing CA's key.
    const issuerKey = createPublicKey(request.issuer.key).export({ type: 'spki', format: 'der' });
    list.push(seq(oid('2.5.29.35'), octets(seq(tlv(0x80, subjectKeyId(issuerKey))))));
  }
  if (!request.ca) {
    const usages = request.usages ?? ['server'];
    list.push(seq(oid('2.5.29.37'), octets(seq(...usages.map((u) => oid(EXT_KEY_USAGE[u]))))));
  }
  const hosts = request.hosts ?? [];
  if (hosts.length > 0) {
    // An IPv4 address is an iPAddress name (a client connecting to it checks that), else a dNSName.
    const names = hosts.map((h) =>
      IPV4.test(h) ? tlv(0x87, Buffer.from(h.split('.').map(Number))) : tlv(0x82, Buffer.from(h, 'ascii')),
    );
    list.push(seq(oid('2.5.29.17'), octets(seq(...names))));
  }
  return list;
}

/** The subject of a PEM certificate, as DER: the issuer field of what it signs must equal it byte for byte. */
function subjectOf(certPem: string): Buffer {
  const der = Buffer.from(certPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, ''), 'base64');
  // Certificate → tbsCertificate → [version, serial, signature algorithm, issuer, validity, subject].
  const subject = children(children(der)[0])[5];
  if (!subject) throw new Error('not a DER certificate: no subject');
  return subject;
}

/** The DER elements inside a constructed element (each with its tag and length). */
function children(element: Buffer | undefined): Buffer[] {
  if (!element) throw new Error('not a DER certificate');
  const { header, length } = lengthOf(element, 0);
  const out: Buffer[] = [];
  let at = header;
  while (at < header + length) {
    const inner = lengthOf(element, at);
    out.push(element.subarray(at, at + inner.header + inner.length));
    at += inner.header + inner.length;
  }
  return out;
}

function lengthOf(buf: Buffer, at: number): { header: number; length: number } {
  const first = buf.readUInt8(at + 1);
  if (first < 0x80) return { header: 2, length: first };
  const n = first & 0x7f;
  let length = 0;
  for (let i = 0; i < n; i++) length = length * 256 + buf.readUInt8(at + 2 + i);
  return { header: 2 + n, length };
}

/** A positive 16-byte serial in minimal DER: the top bit clear, the next one set (never a padding 0x00). */
function serialNumber(): Buffer {
  const serial = randomBytes(16);
  serial.writeUInt8((serial.readUInt8(0) & 0x3f) | 0x40, 0);
  return serial;
}

/** A key identifier: 20 bytes of the public key's SHA-256 (RFC 7093's method 1). */
function subjectKeyId(spki: Buffer): Buffer {
  return createHash('sha256').update(spki).digest().subarray(0, 20);
}

function distinguishedName(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

function tlv(tag: number, value: Buffer): Buffer {
  const n = value.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, value]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (value: Buffer) => tlv(0x04, value);
const int = (value: Buffer) => tlv(0x02, value);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime (YYMMDDHHMMSSZ) to 2049, GeneralizedTime after, as RFC 5280 asks. */
function time(d: Date): Buffer {
  const iso = d.toISOString();
  const rest = `${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${iso.slice(2, 4)}${rest}`, 'ascii'))
    : tlv(0x18, Buffer.from(`${iso.slice(0, 4)}${rest}`, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const b64 = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
