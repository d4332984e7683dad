import type * as Crypto from 'node:crypto';
import { randomBytes, X509Certificate } from 'node:crypto';
import { selfSignedCertificate } from '../../../../operator/runtime/webhooks/self-signed';

// The serial's random bytes, chosen by the test where it says so; random otherwise.
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof Crypto>('node:crypto');
  return { ...actual, randomBytes: jest.fn(actual.randomBytes) };
});

test('every certificate is valid DER: its random serial never starts with a padding byte', () => {
  // About 1 in 512 random serials began with a 0x00 byte before a byte below 0x80, which is not
  // minimal DER ("illegal padding"). Every first byte the random source can give, each followed by
  // a byte below 0x80 and by one above, so no case is left to chance.
  for (let first = 0; first < 256; first++) {
    for (const second of [0x00, 0x7f, 0x80, 0xff]) {
      jest
        .mocked(randomBytes)
        .mockImplementationOnce((size: number) =>
          Buffer.concat([Buffer.from([first, second]), Buffer.alloc(size - 2, 0x5a)]),
        );
      const { cert } = selfSignedCertificate('x', ['x.example.com', '127.0.0.1']);
      expect(() => new X509Certificate(cert)).not.toThrow();
    }
  }
  expect(randomBytes).toHaveBeenCalledTimes(256 * 4);
});

test('the names: DNS names and IPv4 addresses', () => {
  const x = new X509Certificate(selfSignedCertificate('x', ['svc.ns.svc', '127.0.0.1']).cert);
  expect(x.subjectAltName).toBe('DNS:svc.ns.svc, IP Address:127.0.0.1');
});
