/**
 * Webhooks for a reconciler run out of cluster against the local control plane (the package's
 * `cluster` and `run` commands). The API server calls the operator's webhooks through the
 * Services its manifests name; no Service can route to a process on a laptop, but the control
 * plane's egress proxy can: the reconciler serves on 127.0.0.1 with an in-memory certificate for
 * those Services' names, adds a route from each Service to itself, and has the callers trust the
 * certificate (`caBundle`, as the self-managed certificate in a cluster is trusted).
 *
 * Nothing is repointed: the CRDs and webhook configurations keep the Service their owner
 * applied, so `kubectl apply --server-side -f dist/` and the Helm chart apply them again as they
 * are. (Pointing them at a loopback `url` instead left a `url` of another field manager beside
 * the owner's `service`, which the API server refuses.) Refused for an API server without such a
 * proxy: a shared cluster cannot reach one person's loopback.
 */
import type { Logger } from 'pino';
import { BuiltinTypes, type KubeObject, type ResourceType } from '../../../constructs/contract';
import { WEBHOOK_PORT_NAME } from '../../../constructs/contract/webhook-paths';
import { isNotFound, type KubeClient } from '../client';
import {
  type ClientConfigAt,
  conversionClientConfigs,
  webhookClientConfigs,
  selfSignedCertificate,
  type ServingCertificate,
  trustAt,
} from '../webhooks';
import { addRoute } from './egress-routes';
import { isLoopbackHost } from './loopback-host';

/** The address the webhooks are served at. */
export const LOOPBACK_HOST = '127.0.0.1';

/** Whether an API server URL is on this machine. */
export function isLoopbackServer(server: string): boolean {
  try {
    return isLoopbackHost(new URL(server).hostname);
  } catch {
    return false;
  }
}

/** A certificate, made in memory (never written anywhere), for the Services' names and 127.0.0.1. */
export function loopbackCertificate(serviceHosts: readonly string[] = []): ServingCertificate {
  return selfSignedCertificate(serviceHosts[0] ?? LOOPBACK_HOST, [...serviceHosts, LOOPBACK_HOST]);
}

export interface LoopbackTargets {
  /** CRDs whose conversion webhook calls the reconciler. */
  readonly conversionCrds: readonly string[];
  readonly validatingConfiguration?: string;
  readonly mutatingConfiguration?: string;
}

/** An object that calls the webhooks, as read (or undefined: not installed), with where its client configs are. */
interface Caller {
  readonly type: ResourceType;
  readonly name: string;
  readonly configsOf: (o: KubeObject) => ClientConfigAt[];
  readonly object?: KubeObject;
}

/** The objects that call the webhooks, each read once. */
export async function readCallers(client: KubeClient, targets: LoopbackTargets): Promise<Caller[]> {
  const wanted: Omit<Caller, 'object'>[] = [
    ...targets.conversionCrds.map((name) => ({
      type: BuiltinTypes.CustomResourceDefinition,
      name,
      configsOf: conversionClientConfigs,
    })),
    ...(targets.validatingConfiguration
      ? [
          {
            type: BuiltinTypes.ValidatingWebhookConfiguration,
            name: targets.validatingConfiguration,
            configsOf: webhookClientConfigs,
          },
        ]
      : []),
    ...(targets.mutatingConfiguration
      ? [
          {
            type: BuiltinTypes.MutatingWebhookConfiguration,
            name: targets.mutatingConfiguration,
            configsOf: webhookClientConfigs,
          },
        ]
      : []),
  ];
  return Promise.all(
    wanted.map(async (c) => {
      try {
        return { ...c, object: await client.get(c.type, c.name) };
      } catch (err) {
        if (isNotFound(err)) return c;
        throw err;
      }
    }),
  );
}

/** The Services the callers' client configs name, as `<svc>.<ns>.svc:<port>` (the proxy's spelling). */
export function servicesCalled(callers: readonly Caller[]): string[] {
  const services = callers.flatMap((c) =>
    c.object
      ? c.configsOf(c.object).flatMap(({ config }) => {
          const s = config.service;
          return s?.name && s.namespace ? [`${s.name}.${s.namespace}.svc:${String(s.port ?? 443)}`] : [];
        })
      : [],
  );
  return [...new Set(services)];
}

/** `<svc>.<ns>.svc` of a Service address: the name its certificate is for. */
export function serviceHost(service: string): string {
  return service.slice(0, service.lastIndexOf(':'));
}

/**
 * Routes each Service the callers name to the server on `port`, and has each caller trust `cert`
 * (its `caBundle`, nothing else). A caller not installed is skipped: nothing calls it.
 */
export async function routeToLoopback(
  client: KubeClient,
  server: { readonly routes: string; readonly port: number; readonly cert: string },
  callers: readonly Caller[],
  logger: Logger,
): Promise<void> {
  const { routes, port, cert } = server;
  // Trusted first, routed second: once a route is there (and logged), the API server's calls
  // through it find a certificate the caller trusts — as soon as it has read the new caBundle.
  for (const caller of callers) {
    if (!caller.object) {
      logger.warn({ kind: caller.type.kind, name: caller.name }, 'not installed: nothing calls these webhooks yet');
      continue;
    }
    const urls = caller.configsOf(caller.object).filter((c) => c.config.url !== undefined);
    if (urls.length)
      logger.warn(
        { kind: caller.type.kind, name: caller.name, url: urls[0]?.config.url },
        'calls its webhook by url, not through a Service: apply the manifests this operator was built with',
      );
    await trustAt(client, caller.type, caller.name, cert, caller.configsOf);
  }
  for (const service of servicesCalled(callers)) {
    await ensureService(client, service, logger);
    addRoute(routes, service, `${LOOPBACK_HOST}:${String(port)}`);
    logger.info({ service, target: `${LOOPBACK_HOST}:${String(port)}` }, 'webhook Service routed to this process');
  }
}

/**
 * Marks what a local run made. An annotation, not a label: the manifests applied later set
 * labels of their own, and a field both set otherwise would be a server-side apply conflict.
 */
export const MADE_FOR_LOCAL_RUN = { 'cdk8s-operator-kit.io/made-for': 'a local run (cdk8s-operator-kit run)' };

/**
 * The API server resolves a webhook's Service before it dials (through the proxy's route): with
 * only the CRDs applied (the README's local path), the Service the operator's manifests would
 * make is not there. A run on the local control plane makes it, selector-less, and its namespace
 * if that is missing too — with the port fields set as the manifests set them, so that applying
 * them later (`kubectl apply --server-side -f dist/`) takes it over without a conflict.
 */
async function ensureService(client: KubeClient, service: string, logger: Logger): Promise<void> {
  const [name = '', namespace = ''] = serviceHost(service).split('.');
  const port = Number(service.slice(service.lastIndexOf(':') + 1));
  if (await exists(client, BuiltinTypes.Service, name, namespace)) return;
  if (!(await exists(client, BuiltinTypes.Namespace, namespace, undefined)))
    await client.create(BuiltinTypes.Namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, annotations: MADE_FOR_LOCAL_RUN },
    });
  await client.create(
    BuiltinTypes.Service,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, annotations: MADE_FOR_LOCAL_RUN },
      // The values the operator's own Service has (constructs/core/webhooks.ts), and nothing it
      // leaves to defaults: applying it later shares these fields instead of conflicting.
      spec: { ports: [{ port, targetPort: WEBHOOK_PORT_NAME, protocol: 'TCP' }] },
    },
    namespace,
  );
  logger.info(
    { service },
    'made the webhook Service the CRDs call, for this local run (the operator manifests install it)',
  );
}

/** Whether an object exists; true when it cannot be told (not allowed to read it). */
async function exists(
  client: KubeClient,
  type: ResourceType,
  name: string,
  namespace: string | undefined,
): Promise<boolean> {
  try {
    await client.get(type, name, namespace);
    return true;
  } catch (err) {
    return !isNotFound(err);
  }
}
