/**
 * Webhooks for a reconciler run out of cluster against an API server on the same machine (the
 * package's `cluster` and `run` commands), as envtest does for controller-runtime: no Service
 * can route to a process on a laptop, so the operator's own CRDs (their conversion) and webhook
 * configuration are pointed at `https://127.0.0.1:<port><path>` with an in-memory certificate.
 * Refused for any other API server: pointing a shared cluster's CRDs at one person's loopback
 * would break them for everyone.
 */
import { isIPv4 } from 'node:net';
import type { Logger } from 'pino';
import { BuiltinTypes, type KubeObject, type ResourceType } from '../../constructs/contract';
import { isNotFound, type KubeClient } from './client';
import { resourcePath } from './resource';
import { selfSignedCertificate } from './self-signed';
import type { ServingCertificate } from './webhook-certificate';

/** The address the webhooks are served at, and the only names the certificate is for. */
export const LOOPBACK_HOST = '127.0.0.1';

/** Whether an API server URL is on this machine. */
export function isLoopbackServer(server: string): boolean {
  try {
    const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'));
  } catch {
    return false;
  }
}

/** A certificate for 127.0.0.1, made in memory (never written anywhere). */
export function loopbackCertificate(): ServingCertificate {
  return selfSignedCertificate(LOOPBACK_HOST, [LOOPBACK_HOST]);
}

export interface LoopbackTargets {
  /** CRDs whose conversion webhook is pointed at the loopback server. */
  readonly conversionCrds: readonly string[];
  readonly validatingConfiguration?: string;
  readonly mutatingConfiguration?: string;
}

interface ClientConfig {
  url?: string;
  service?: { path?: string };
  caBundle?: string;
}

/**
 * Points every webhook client config of those objects at `https://127.0.0.1:<port>`, keeping
 * each one's path, trusting `cert`. An object not installed is skipped (nothing calls it).
 */
export async function pointAtLoopback(
  client: KubeClient,
  port: number,
  cert: string,
  targets: LoopbackTargets,
  logger: Logger,
): Promise<void> {
  const base = `https://${LOOPBACK_HOST}:${port}`;
  const caBundle = Buffer.from(cert).toString('base64');
  const configurations = [
    [BuiltinTypes.ValidatingWebhookConfiguration, targets.validatingConfiguration],
    [BuiltinTypes.MutatingWebhookConfiguration, targets.mutatingConfiguration],
  ] as const;
  const objects: Target[] = [
    ...targets.conversionCrds.map((name) => ({
      type: BuiltinTypes.CustomResourceDefinition,
      name,
      configsOf: crdConfigs,
    })),
    ...configurations.flatMap(([type, name]) => (name ? [{ type, name, configsOf: webhookConfigs }] : [])),
  ];
  for (const { type, name, configsOf } of objects) {
    let object: KubeObject;
    try {
      object = await client.get(type, name);
    } catch (err) {
      if (isNotFound(err)) {
        logger.warn({ kind: type.kind, name }, 'not installed: nothing to point at the loopback webhooks');
        continue;
      }
      throw err;
    }
    const ops = configsOf(object).flatMap(([at, config]) => {
      const url = `${base}${pathOf(config)}`;
      return config.url === url && config.caBundle === caBundle
        ? []
        : [{ op: 'replace', path: at, value: { url, caBundle } }];
    });
    if (ops.length === 0) continue;
    await client.request('PATCH', resourcePath(type, undefined, name), {
      body: [{ op: 'test', path: '/metadata/resourceVersion', value: object.metadata.resourceVersion }, ...ops],
      contentType: 'application/json-patch+json',
    });
    logger.info({ kind: type.kind, name, url: base }, 'webhooks pointed at this process on loopback');
  }
}

/** An object, and its client configs with their JSON pointers. */
interface Target {
  readonly type: ResourceType;
  readonly name: string;
  readonly configsOf: (o: KubeObject) => [string, ClientConfig][];
}

function crdConfigs(o: KubeObject): [string, ClientConfig][] {
  const webhook = (o as { spec?: { conversion?: { webhook?: { clientConfig?: ClientConfig } } } }).spec?.conversion
    ?.webhook;
  return webhook?.clientConfig ? [['/spec/conversion/webhook/clientConfig', webhook.clientConfig]] : [];
}

function webhookConfigs(o: KubeObject): [string, ClientConfig][] {
  return ((o as { webhooks?: { clientConfig?: ClientConfig }[] }).webhooks ?? []).flatMap((w, i) =>
    w.clientConfig ? [[`/webhooks/${i}/clientConfig`, w.clientConfig] as [string, ClientConfig]] : [],
  );
}

function pathOf(config: ClientConfig): string {
  if (config.service) return config.service.path ?? '/';
  try {
    return config.url ? new URL(config.url).pathname : '/';
  } catch {
    return '/';
  }
}
