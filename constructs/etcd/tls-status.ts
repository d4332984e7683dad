import type { EventSpec, Problem } from '../contract';
import type { EtcdCluster, EtcdClusterStatus } from './api';
import type { CertificatesOutcome } from './certificates';
import { type EtcdTransport, etcdTransport, tlsChangeRefused } from './tls';

/** What an EtcdCluster's status and Events say of its transport and certificates: pure. */

/** How the members talk, and with TLS when the first certificate expires (as last seen). */
export function transportFields(
  cluster: EtcdCluster,
  made: EtcdTransport | undefined,
  certificates?: CertificatesOutcome,
): Partial<EtcdClusterStatus> {
  const transport = etcdTransport(cluster, made);
  const expires = transport === 'TLS' ? (certificates?.expires ?? cluster.status?.certificatesExpire) : undefined;
  return { transport, ...(expires ? { certificatesExpire: expires } : {}) };
}

/** A `spec.tls.enabled` the cluster's members cannot follow in place. */
export function tlsRefusal(cluster: EtcdCluster, made: EtcdTransport | undefined): Problem | undefined {
  const message = tlsChangeRefused(cluster, made);
  return message ? { reason: 'TLSChangeRefused', message } : undefined;
}

/** Certificate Secrets of the cluster's names that it does not control: never read or changed. */
export function secretsNotOwned(certificates?: CertificatesOutcome): Problem | undefined {
  const foreign = certificates?.foreign ?? [];
  if (foreign.length === 0) return undefined;
  return {
    reason: 'SecretNotOwned',
    message: `Secret ${foreign.join(', ')} exists but is not this cluster's (no controller owner reference to it): not read or changed, so no certificate is issued; delete or rename it`,
  };
}

/** A Normal Event when certificates are issued or renewed. */
export function certificateEvents(certificates?: CertificatesOutcome): EventSpec[] {
  const events: EventSpec[] = [];
  if (certificates?.issued.length)
    events.push({
      type: 'Normal',
      reason: 'CertificatesIssued',
      message: certificates.issuer
        ? `asked cert-manager (${certificates.issuer}) for the cluster's TLS certificates: Certificate ${certificates.issued.join(', ')}`
        : `issued the cluster's TLS certificates in Secret ${certificates.issued.join(', ')}`,
    });
  // A rotation's own Events say what its renewals are for (they need restarts: rotationEvents).
  if (certificates?.renewed.length && !certificates.rotation?.changed)
    events.push({
      type: 'Normal',
      reason: 'CertificatesRenewed',
      message: `renewed the certificates in Secret ${certificates.renewed.join(', ')} (valid until ${certificates.expires ?? 'unknown'}); members read them without a restart`,
    });
  events.push(...rotationEvents(certificates));
  return events;
}

/** Normal Events as a rotation of the CAs begins, moves on and ends. */
function rotationEvents(certificates?: CertificatesOutcome): EventSpec[] {
  const changed = certificates?.rotation?.changed;
  if (!changed) return [];
  if (changed.to === 'trust')
    return [
      {
        type: 'Normal',
        reason: 'CARotationStarted',
        message: `made new CAs (${changed.why ?? 'asked'}): members restart one at a time to trust them beside the old ones, then again to drop the old`,
      },
    ];
  if (changed.to === 'drop')
    return [
      {
        type: 'Normal',
        reason: 'CAsTrusted',
        message:
          'every member trusts the new CAs: the certificates are issued again from them, and members restart once more to drop the old CAs',
      },
    ];
  return [
    { type: 'Normal', reason: 'CAsRotated', message: 'every member trusts the new CAs alone: the old CAs are gone' },
  ];
}
