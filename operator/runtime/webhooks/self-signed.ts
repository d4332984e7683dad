/** The servers' self-signed certificates: made by the kit's one X.509 writer (see constructs/contract/x509). */
export { selfSignedCertificate } from '../../../constructs/contract/x509';
