/**
 * The webhook server's certificate, managed by the operator itself (controller-runtime users
 * reach for cert-manager; the kit needs nothing installed): a self-signed certificate kept in
 * the one Secret the Operator construct makes for it, shared by every replica, renewed when a
 * third of its life is left, and trusted through the `caBundle` of the operator's own webhook
 * configurations. RBAC allows exactly that Secret and those configurations, by name.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { Logger } from 'pino';
import { BuiltinTypes, type KubeObject, type ResourceType } from '../../../constructs/contract';
import { isConflict, type KubeClient } from '../client';
import {
  type ClientConfigAt,
  conversionClientConfigs,
  patchClientConfigs,
  webhookClientConfigs,
} from './client-configs';
import { selfSignedCertificate } from './self-signed';

export interface WebhookCertificateOptions {
  readonly client: KubeClient;
  /** The operator's namespace, where the Secret is. */
  readonly namespace: string;
  /** The Secret holding `tls.crt` and `tls.key` (made empty by the Operator construct). */
  readonly secretName: string;
  /** The names the certificate must be valid for: the Service's DNS names, or a loopback IP in tests. */
  readonly hosts: readonly string[];
  /** The webhook configurations whose `caBundle` must trust it. */
  readonly validatingConfiguration?: string;
  readonly mutatingConfiguration?: string;
  /** The CRDs whose conversion webhook (`spec.conversion.webhook.clientConfig.caBundle`) must trust it. */
  readonly conversionCrds?: readonly string[];
  readonly logger: Logger;
  /** @default 365 */
  readonly validityDays?: number;
  /** @default the current time */
  readonly now?: () => Date;
}

export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

/**
 * The certificate to serve: the Secret's when it is still good for the hosts and more than a
 * third of its life is left; otherwise a new one written to the Secret (with its
 * resourceVersion as precondition: when two replicas race, the loser takes the winner's). Then
 * every webhook of the configurations is made to trust it.
 */
// eslint-disable-next-line complexity -- read the Secret, renew a certificate missing or not good for the hosts (a precondition on the write, another replica's taken on a conflict), then trust it everywhere: one Secret's lifecycle kept together
export async function ensureWebhookCertificate(o: WebhookCertificateOptions): Promise<ServingCertificate> {
  const now = o.now?.() ?? new Date();
  let secret = await o.client.get<KubeObject & { data?: Record<string, string> }>(
    BuiltinTypes.Secret,
    o.secretName,
    o.namespace,
  );
  let current = decode(secret.data);
  if (!current || !goodFor(current, o.hosts, now)) {
    const made = selfSignedCertificate(o.hosts[0] ?? 'webhook', o.hosts, o.validityDays ?? 365);
    try {
      // The certificate it replaces stays trusted beside it until it expires: replicas that
      // still serve it (until their next check) keep working.
      const previous = current ? { 'previous.crt': b64(current.cert) } : {};
      secret = await o.client.mergePatch(BuiltinTypes.Secret, o.secretName, o.namespace, {
        metadata: { resourceVersion: secret.metadata.resourceVersion },
        data: { 'tls.crt': b64(made.cert), 'tls.key': b64(made.key), ...previous },
      });
      current = made;
      o.logger.info({ secret: o.secretName, hosts: o.hosts }, 'wrote a new webhook serving certificate');
    } catch (err) {
      if (!isConflict(err)) throw err;
      // Another replica wrote one first: use it.
      secret = await o.client.get(BuiltinTypes.Secret, o.secretName, o.namespace);
      current = decode(secret.data);
      if (!current)
        throw new Error(`Secret ${o.namespace}/${o.secretName} changed but holds no certificate`, { cause: err });
    }
  }
  const previous = secret.data?.['previous.crt'];
  const trusted = [current.cert, ...(previous && !expired(unb64(previous), now) ? [unb64(previous)] : [])];
  for (const [type, name] of [
    [BuiltinTypes.ValidatingWebhookConfiguration, o.validatingConfiguration],
    [BuiltinTypes.MutatingWebhookConfiguration, o.mutatingConfiguration],
  ] as const) {
    if (name) await trustIn(o.client, type, name, trusted.join(''), o.logger);
  }
  for (const crd of o.conversionCrds ?? []) await trustInConversion(o.client, crd, trusted.join(''), o.logger);
  return current;
}

/** Whether a certificate serves every host, matches its key, and has more than a third of its life left. */
export function goodFor(c: ServingCertificate, hosts: readonly string[], now: Date): boolean {
  try {
    const x = new X509Certificate(c.cert);
    if (!x.checkPrivateKey(createPrivateKey(c.key))) return false;
    const from = Date.parse(x.validFrom);
    const to = Date.parse(x.validTo);
    if (now.getTime() > to - (to - from) / 3) return false;
    const names = (x.subjectAltName ?? '').split(', ');
    return hosts.every((h) => names.includes(`DNS:${h}`) || names.includes(`IP Address:${h}`));
  } catch {
    return false;
  }
}

/** Makes each webhook of a Validating/MutatingWebhookConfiguration trust the certificates. */
async function trustIn(
  client: KubeClient,
  type: ResourceType,
  name: string,
  cert: string,
  logger: Logger,
): Promise<void> {
  const count = await trustAt(client, type, name, cert, webhookClientConfigs);
  if (count)
    logger.info({ configuration: name, webhooks: count }, 'webhook configuration now trusts the serving certificate');
}

/** Makes a CRD's conversion webhook trust the certificates. */
async function trustInConversion(client: KubeClient, name: string, cert: string, logger: Logger): Promise<void> {
  const count = await trustAt(client, BuiltinTypes.CustomResourceDefinition, name, cert, (crd) => {
    const configs = conversionClientConfigs(crd);
    if (configs.length === 0)
      logger.warn(
        { crd: name },
        'the CRD has no conversion webhook to trust the certificate; install the CRD this operator was built with',
      );
    return configs;
  });
  if (count) logger.info({ crd: name }, 'CRD conversion webhook now trusts the serving certificate');
}

/**
 * Sets `caBundle` to the certificates (PEM, concatenated) in each client config of an object
 * that lacks them. An object not installed (yet) is left alone: nothing calls it.
 */
export function trustAt(
  client: KubeClient,
  type: ResourceType,
  name: string,
  cert: string,
  clientConfigsOf: (object: KubeObject) => ClientConfigAt[],
): Promise<number | undefined> {
  const bundle = b64(cert);
  return patchClientConfigs(client, type, name, (object) =>
    clientConfigsOf(object)
      .filter((c) => c.config.caBundle !== bundle)
      .map((c) => ({ op: 'add', path: `${c.path}/caBundle`, value: bundle })),
  );
}

function expired(cert: string, now: Date): boolean {
  try {
    return Date.parse(new X509Certificate(cert).validTo) <= now.getTime();
  } catch {
    return true;
  }
}

function unb64(text: string): string {
  return Buffer.from(text, 'base64').toString('utf8');
}

function decode(data: Record<string, string> | undefined): ServingCertificate | undefined {
  const cert = data?.['tls.crt'];
  const key = data?.['tls.key'];
  if (!cert || !key) return undefined;
  return { cert: unb64(cert), key: unb64(key) };
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
