import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * A self-signed ECDSA P-256 serving certificate for DNS names and IPv4 addresses, made in
 * process: what the metrics endpoint (and the webhook server, see certificate.ts)
 * serves when no certificate is mounted (as controller-runtime does). Node can sign but not
 * build X.509, so the few DER structures a certificate needs are written here rather than
 * pulling in a PKI library.
 */
export function selfSignedCertificate(
  commonName: string,
  dnsNames: readonly string[],
  validDays = 365,
): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
  const now = Date.now();
  const validity = seq(time(new Date(now - 60_000)), time(new Date(now + validDays * 86_400_000)));
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // An IPv4 address is an iPAddress name (a client connecting to it checks that), else a dNSName.
  const subjectAltName = seq(
    ...dnsNames.map((d) =>
      IPV4.test(d) ? tlv(0x87, Buffer.from(d.split('.').map(Number))) : tlv(0x82, Buffer.from(d, 'ascii')),
    ),
  );
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), octets(seq())), // basicConstraints, critical: not a CA
      seq(oid('2.5.29.15'), tlv(0x01, Buffer.from([0xff])), octets(tlv(0x03, Buffer.from([0x07, 0x80])))), // keyUsage: digitalSignature
      seq(oid('2.5.29.37'), octets(seq(oid('1.3.6.1.5.5.7.3.1')))), // extKeyUsage: serverAuth
      seq(oid('2.5.29.17'), octets(subjectAltName)),
    ),
  );
  const serial = randomBytes(16);
  // A positive INTEGER in minimal DER: the top bit clear (positive) and the next one set, so the
  // first byte is never 0x00 (a 0x00 before a byte below 0x80 is padding DER refuses).
  serial.writeUInt8((serial.readUInt8(0) & 0x3f) | 0x40, 0);
  const tbs = seq(
    tlv(0xa0, int(Buffer.from([2]))),
    int(serial),
    ecdsaWithSha256,
    name,
    validity,
    name,
    spki,
    extensions,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    cert: pem('CERTIFICATE', der),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
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

/** UTCTime (YYMMDDHHMMSSZ), valid to 2049 as RFC 5280 asks. */
function time(d: Date): Buffer {
  const iso = d.toISOString();
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const b64 = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
