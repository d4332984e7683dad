/**
 * Webhooks for a reconciler run out of cluster against an API server on the same machine (the
 * package's `cluster` and `run` commands), as envtest does for controller-runtime: no Service
 * can route to a process on a laptop, so the operator's own CRDs (their conversion) and webhook
 * configuration are pointed at `https://127.0.0.1:<port><path>` with an in-memory certificate.
 * Refused for any other API server: pointing a shared cluster's CRDs at one person's loopback
 * would break them for everyone.
 */
import type { Logger } from 'pino';
import { BuiltinTypes, type KubeObject, type ResourceType } from '../../constructs/contract';
import type { KubeClient } from './client';
import {
  type ClientConfig,
  type ClientConfigAt,
  conversionClientConfigs,
  patchClientConfigs,
  webhookClientConfigs,
} from './client-configs';
import { isLoopbackHost } from './loopback-host';
import { selfSignedCertificate } from './self-signed';
import type { ServingCertificate } from './webhook-certificate';

/** The address the webhooks are served at, and the only names the certificate is for. */
export const LOOPBACK_HOST = '127.0.0.1';

/** Whether an API server URL is on this machine. */
export function isLoopbackServer(server: string): boolean {
  try {
    return isLoopbackHost(new URL(server).hostname);
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
  const objects: Target[] = [
    ...targets.conversionCrds.map((name): Target => [
      BuiltinTypes.CustomResourceDefinition,
      name,
      conversionClientConfigs,
    ]),
    [BuiltinTypes.ValidatingWebhookConfiguration, targets.validatingConfiguration, webhookClientConfigs],
    [BuiltinTypes.MutatingWebhookConfiguration, targets.mutatingConfiguration, webhookClientConfigs],
  ];
  for (const [type, name, configsOf] of objects) {
    if (!name) continue;
    const count = await patchClientConfigs(client, type, name, (object) =>
      configsOf(object).flatMap(({ path, config }) => {
        const url = `${base}${pathOf(config)}`;
        return config.url === url && config.caBundle === caBundle
          ? []
          : [{ op: 'replace' as const, path, value: { url, caBundle } }];
      }),
    );
    if (count === undefined)
      logger.warn({ kind: type.kind, name }, 'not installed: nothing to point at the loopback webhooks');
    else if (count > 0)
      logger.info({ kind: type.kind, name, url: base }, 'webhooks pointed at this process on loopback');
  }
}

/** An object (not named: not asked for) and where its client configs are. */
type Target = [ResourceType, string | undefined, (o: KubeObject) => ClientConfigAt[]];

function pathOf(config: ClientConfig): string {
  if (config.service) return config.service.path ?? '/';
  try {
    return config.url ? new URL(config.url).pathname : '/';
  } catch {
    return '/';
  }
}
