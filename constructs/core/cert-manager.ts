import type { KubeObject, MadeFor, ResourceType } from '../contract';
import { DNS_SUBDOMAIN_MAX_LENGTH, DNS_SUBDOMAIN_PATTERN } from './formats';
import { t } from './schema';

/**
 * cert-manager's Certificate as a kind asks for one at run time (cert-manager.io/v1), and how a
 * CRD names the issuer that signs it. Facts of cert-manager's API: it writes a Certificate's key
 * pair into the Secret `spec.secretName` (`tls.crt`, `tls.key` and, for CA, Vault and
 * self-signed issuers, `ca.crt`), annotates that Secret with the Certificate's name, renews the
 * certificate before it expires in the same Secret, and reports `Ready` and `notAfter` in the
 * Certificate's status.
 */

/** Who signs: an Issuer (the Certificate's namespace), a ClusterIssuer, or an external issuer's kind. */
export interface IssuerRef {
  readonly name: string;
  readonly kind?: string;
  readonly group?: string;
}

export interface CertificateObject extends KubeObject {
  spec: {
    secretName: string;
    commonName?: string;
    dnsNames?: string[];
    ipAddresses?: string[];
    usages?: string[];
    issuerRef: { name: string; kind: string; group: string };
    privateKey?: { algorithm?: string; size?: number; rotationPolicy?: string };
    secretTemplate?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    notAfter?: string;
    revision?: number;
  };
}

export const CertManagerTypes = {
  Certificate: {
    group: 'cert-manager.io',
    version: 'v1',
    kind: 'Certificate',
    resource: 'certificates',
    namespaced: true,
  } as ResourceType<CertificateObject>,
};

/** The annotation cert-manager puts on the Secret it writes for a Certificate: the Certificate's name. */
export const CERTIFICATE_NAME_ANNOTATION = 'cert-manager.io/certificate-name';

/** The Secret a Certificate of the resource's own was written to, for `getMadeFor`. */
export function secretOfCertificate(certificate: string): MadeFor {
  return { type: CertManagerTypes.Certificate, name: certificate, annotation: CERTIFICATE_NAME_ANNOTATION };
}

/** An issuer reference with cert-manager's defaults filled in (an Issuer of cert-manager.io). */
export function fullIssuerRef(ref: IssuerRef): { name: string; kind: string; group: string } {
  return { name: ref.name, kind: ref.kind ?? 'Issuer', group: ref.group ?? 'cert-manager.io' };
}

/** How an issuer reference reads in messages: `Issuer ca`, `ClusterIssuer corp (cert-manager.io)`. */
export function describeIssuer(ref: IssuerRef): string {
  const full = fullIssuerRef(ref);
  return `${full.kind} ${full.name}${full.group === 'cert-manager.io' ? '' : ` (${full.group})`}`;
}

/** Whether a Certificate's issued certificate is current (`Ready=True`), and what it says otherwise. */
export function certificateReadiness(certificate: CertificateObject): { ready: boolean; message: string } {
  const ready = certificate.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready) return { ready: false, message: 'cert-manager has not reported on it yet' };
  const message = [ready.reason, ready.message].filter(Boolean).join(': ');
  return { ready: ready.status === 'True', message };
}

/** The schema of an issuer reference in a CRD. */
export function issuerRefSchema(description: string) {
  return t.object(
    {
      name: t.string({
        required: true,
        minLength: 1,
        maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
        pattern: DNS_SUBDOMAIN_PATTERN,
        description: "The issuer's name.",
      }),
      kind: t.string({
        minLength: 1,
        maxLength: 63,
        pattern: '^[A-Z][A-Za-z0-9]*$',
        description:
          "Issuer (in the resource's namespace), ClusterIssuer, or an external issuer's kind. Omitted: Issuer.",
      }),
      group: t.string({
        minLength: 1,
        maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
        pattern: DNS_SUBDOMAIN_PATTERN,
        description: "The issuer's API group, for an external issuer. Omitted: cert-manager.io.",
      }),
    },
    { description },
  );
}
