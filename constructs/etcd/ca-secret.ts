import { X509Certificate } from 'node:crypto';
import { BuiltinTypes, type PrepareApi, type Secret } from '../contract';
import { issueCertificate, type KeyPair } from '../contract/x509';
import type { EtcdCluster } from './api';
import { tlsObjectMetadata } from './certificate-specs';
import {
  CA_ROTATED_FOR_ANNOTATION,
  CA_ROTATION_ANNOTATION,
  CA_ROTATION_SINCE_ANNOTATION,
  type CaRotationPhase,
  ROTATE_CA_ANNOTATION,
} from './ca-rotation-names';
import { CA_KEYS, etcdTlsSecrets } from './tls';

/**
 * The cluster's CA Secret (`<name>-ca`, the operator's alone): its two CAs, and a rotation of
 * them under way (loaded only by the runtime: node:crypto).
 *
 * A rotation replaces both CAs without a moment in which two members distrust each other, since
 * etcd reads its trusted CA files only when it starts:
 * 1. `trust`: new CAs are made beside the old (`next-*`); every certificate Secret's `ca.crt`
 *    becomes both; each member pod made before that is restarted, one at a time, so every member
 *    trusts both. Certificates are still of the old CAs.
 * 2. `drop`: the new CAs become the CAs (the old ones' certificates kept as `retired-*`, for the
 *    operator's own trust while members still serve old certificates); every certificate is
 *    issued again of them, `ca.crt` the new CA alone; each member pod made before that is
 *    restarted again, once every member serves its new certificate, so none trusts the old.
 * 3. done: `retired-*` goes.
 * Each step is read back from the Secret at every reconcile, so an operator that dies anywhere
 * resumes; `since` is written only once the certificates' Secrets say the phase, so a pod made
 * after it surely mounted them.
 */

/** Ten years: a CA outlives many renewals of what it signs, and is itself rotated a third of its life before it ends. */
export const CA_LIFETIME_MS = 10 * 365 * 86_400_000;

export interface ClusterCas {
  readonly peer: KeyPair;
  readonly client: KeyPair;
}

/** The CA Secret as read. */
export interface CaState {
  readonly secret: Secret;
  /** The CAs that sign: the old ones in `trust`, the new ones from `drop` on. */
  readonly cas: ClusterCas;
  /** `trust`: the new CAs, trusted beside `cas`, not yet signing. */
  readonly next?: ClusterCas;
  /** `drop`: the old CAs' certificates, still trusted by the operator while members serve their certificates. */
  readonly retired?: { readonly peer: string; readonly client: string };
  readonly phase?: CaRotationPhase;
  /** When the certificates' Secrets began to say the phase's trust. */
  readonly since?: string;
  /** The value of the user's rotate-ca annotation last acted on. */
  readonly rotatedFor?: string;
}

/** Certificates one after the other, each on lines of its own (a lone one as it is). */
function bundle(first: string, more: string | undefined): string {
  return more ? `${first.trimEnd()}\n${more.trimEnd()}\n` : first;
}

/** What each certificate's `ca.crt` holds, per CA: the signing CA, and the new one beside it in `trust`. */
export function trustedPem(state: CaState, which: keyof ClusterCas): string {
  return bundle(state.cas[which].cert, state.phase === 'trust' ? state.next?.[which].cert : undefined);
}

/** What the operator's own client trusts of the members' serving certificates: every client CA of the moment. */
export function operatorTrustPem(state: CaState): string {
  return bundle(state.cas.client.cert, state.phase === 'trust' ? state.next?.client.cert : state.retired?.client);
}

const NEXT = {
  peerCert: `next-${CA_KEYS.peerCert}`,
  peerKey: `next-${CA_KEYS.peerKey}`,
  clientCert: `next-${CA_KEYS.clientCert}`,
  clientKey: `next-${CA_KEYS.clientKey}`,
} as const;
const RETIRED = { peer: `retired-${CA_KEYS.peerCert}`, client: `retired-${CA_KEYS.clientCert}` } as const;

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

function casAt(data: Record<string, string>, keys: typeof CA_KEYS | typeof NEXT): ClusterCas | undefined {
  const read = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : undefined);
  const [peerCert, peerKey, clientCert, clientKey] = [
    read(keys.peerCert),
    read(keys.peerKey),
    read(keys.clientCert),
    read(keys.clientKey),
  ];
  if (!peerCert || !peerKey || !clientCert || !clientKey) return undefined;
  return { peer: { cert: peerCert, key: peerKey }, client: { cert: clientCert, key: clientKey } };
}

/** The state a CA Secret holds, or undefined when it holds no CAs. */
export function caStateOf(secret: Secret): CaState | undefined {
  const data = secret.data ?? {};
  const cas = casAt(data, CA_KEYS);
  if (!cas) return undefined;
  const annotations = secret.metadata.annotations ?? {};
  const phase = annotations[CA_ROTATION_ANNOTATION];
  const read = (k: string) => (data[k] ? Buffer.from(data[k], 'base64').toString('utf8') : undefined);
  const [retiredPeer, retiredClient] = [read(RETIRED.peer), read(RETIRED.client)];
  return {
    secret,
    cas,
    next: casAt(data, NEXT),
    retired: retiredPeer && retiredClient ? { peer: retiredPeer, client: retiredClient } : undefined,
    phase: phase === 'trust' || phase === 'drop' ? phase : undefined,
    since: annotations[CA_ROTATION_SINCE_ANNOTATION],
    rotatedFor: annotations[CA_ROTATED_FOR_ANNOTATION],
  };
}

function newCas(cluster: EtcdCluster, now: Date): ClusterCas {
  const ca = (commonName: string) => issueCertificate({ commonName, ca: true, validForMs: CA_LIFETIME_MS, now });
  return { peer: ca(`${cluster.metadata.name}-peer-ca`), client: ca(`${cluster.metadata.name}-client-ca`) };
}

/** A new CA Secret. The user's rotate-ca annotation of the moment counts as acted on: a new cluster's CAs are new. */
export function newCaSecret(cluster: EtcdCluster, now: Date): Secret {
  const cas = newCas(cluster, now);
  const asked = cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: tlsObjectMetadata(
      cluster,
      etcdTlsSecrets(cluster.metadata.name).ca,
      asked !== undefined ? { [CA_ROTATED_FOR_ANNOTATION]: asked } : undefined,
    ),
    type: 'Opaque',
    data: {
      [CA_KEYS.peerCert]: b64(cas.peer.cert),
      [CA_KEYS.peerKey]: b64(cas.peer.key),
      [CA_KEYS.clientCert]: b64(cas.client.cert),
      [CA_KEYS.clientKey]: b64(cas.client.key),
    },
  };
}

/** Why a rotation should begin now, or undefined: the user asked (a new rotate-ca value), or a CA has a third of its life left. */
export function rotationDue(cluster: EtcdCluster, state: CaState, now: Date): string | undefined {
  if (state.phase) return undefined;
  const asked = cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION];
  if (asked !== undefined && asked !== state.rotatedFor) return `asked by ${ROTATE_CA_ANNOTATION}=${asked}`;
  for (const ca of [state.cas.peer, state.cas.client]) {
    const cert = new X509Certificate(ca.cert);
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    if (to - now.getTime() < (to - from) / 3) return `the CAs expire on ${new Date(to).toISOString()}`;
  }
  return undefined;
}

/** Writes the CA Secret with its data and annotations changed as given; the state it now holds. */
async function rewrite(
  api: PrepareApi,
  state: CaState,
  change: { data?: Record<string, string | undefined>; annotations?: Record<string, string | undefined> },
): Promise<CaState> {
  const drop = (o: Record<string, string>, c: Record<string, string | undefined> = {}) =>
    Object.fromEntries(Object.entries({ ...o, ...c }).filter((e): e is [string, string] => e[1] !== undefined));
  const written = await api.replaceOwn(BuiltinTypes.Secret, {
    ...state.secret,
    data: drop(state.secret.data ?? {}, change.data),
    metadata: {
      ...state.secret.metadata,
      annotations: drop(state.secret.metadata.annotations ?? {}, change.annotations),
    },
  });
  const next = caStateOf(written);
  if (!next) throw new Error(`Secret ${state.secret.metadata.name} lost its CAs in a rewrite`);
  return next;
}

/** 1. New CAs beside the old: `trust`. */
export function beginRotation(api: PrepareApi, cluster: EtcdCluster, state: CaState, now: Date): Promise<CaState> {
  const next = newCas(cluster, now);
  return rewrite(api, state, {
    data: {
      [NEXT.peerCert]: b64(next.peer.cert),
      [NEXT.peerKey]: b64(next.peer.key),
      [NEXT.clientCert]: b64(next.client.cert),
      [NEXT.clientKey]: b64(next.client.key),
    },
    annotations: {
      [CA_ROTATION_ANNOTATION]: 'trust',
      [CA_ROTATION_SINCE_ANNOTATION]: undefined,
      [CA_ROTATED_FOR_ANNOTATION]: cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION] ?? state.rotatedFor,
    },
  });
}

/** 2. Every member trusts both: the new CAs sign, the old ones retire (`drop`). */
export function promoteNextCas(api: PrepareApi, state: CaState): Promise<CaState> {
  const next = state.next;
  if (!next) throw new Error(`Secret ${state.secret.metadata.name} is in the trust phase without new CAs`);
  return rewrite(api, state, {
    data: {
      [CA_KEYS.peerCert]: b64(next.peer.cert),
      [CA_KEYS.peerKey]: b64(next.peer.key),
      [CA_KEYS.clientCert]: b64(next.client.cert),
      [CA_KEYS.clientKey]: b64(next.client.key),
      [RETIRED.peer]: b64(state.cas.peer.cert),
      [RETIRED.client]: b64(state.cas.client.cert),
      [NEXT.peerCert]: undefined,
      [NEXT.peerKey]: undefined,
      [NEXT.clientCert]: undefined,
      [NEXT.clientKey]: undefined,
    },
    annotations: { [CA_ROTATION_ANNOTATION]: 'drop', [CA_ROTATION_SINCE_ANNOTATION]: undefined },
  });
}

/** 3. No member trusts the old CAs any more: the rotation is over. */
export function endRotation(api: PrepareApi, state: CaState): Promise<CaState> {
  return rewrite(api, state, {
    data: { [RETIRED.peer]: undefined, [RETIRED.client]: undefined },
    annotations: { [CA_ROTATION_ANNOTATION]: undefined, [CA_ROTATION_SINCE_ANNOTATION]: undefined },
  });
}

/** The phase's certificates are written: pods made from now on mount them. */
export function markPhaseWritten(api: PrepareApi, state: CaState, now: Date): Promise<CaState> {
  return rewrite(api, state, { annotations: { [CA_ROTATION_SINCE_ANNOTATION]: now.toISOString() } });
}
