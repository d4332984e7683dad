/** The servers' self-signed certificates: made by the kit's one X.509 writer (see constructs/core/x509). */
export { selfSignedCertificate } from '../../../constructs/core/x509';
