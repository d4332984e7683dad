/**
 * The reconciler's public entry point: a manager running the controllers it is given, built
 * from their declarations. In a pod it uses the in-cluster config; out of cluster,
 * --kubeconfig or KUBECONFIG.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import * as v8 from 'node:v8';
import type { Logger } from 'pino';
import type { ControllerDeclaration } from '../constructs/contract';
import { convertingKinds } from '../constructs/contract/webhook-paths';
import { type Flags, parseFlags, usage } from './flags';
import { buildController } from './runtime/reconcile';
import { HttpKubeClient, type KubeClient, loadKubeConfig, RateLimiter } from './runtime/client';
import {
  EventRecorder,
  createLogger,
  MetricsAuthorizer,
  Metrics,
  otlpTracesUrl,
  loadOtlpTracer,
  type Tracer,
} from './runtime/observability';
import { Manager, mountedCertificate, parseBindAddress } from './runtime/controller';
import {
  admissionContextFor,
  ensureWebhookCertificate,
  type ServingCertificate,
  WebhookServer,
  migrateStorage,
} from './runtime/webhooks';
import {
  isLoopbackServer,
  LOOPBACK_HOST,
  loopbackCertificate,
  readCallers,
  routeToLoopback,
  serviceHost,
  servicesCalled,
  egressRoutesBeside,
} from './runtime/local';
import type { KindDescriptor } from '../constructs/contract/kind';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * V8 lets the old generation grow to up to 4 times what survived the last full collection before
 * collecting again, sized for throughput. A controller's cache is long-lived and its garbage
 * short-lived, so that slack was most of its memory: at 1000 resources a 25 MiB live heap sat in
 * 60+ MiB. Growing by 20 % instead keeps the heap near what is live, for a few more (short,
 * concurrent) full collections. A growth factor given on the command line or in NODE_OPTIONS wins.
 */
export const HEAP_GROWING_PERCENT = 20;

/** The V8 flags the reconciler sets on itself: each one its operator has not set already. */
export function v8TuningFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = (flag: RegExp) => [...execArgv, nodeOptions].some((a) => flag.test(a));
  return [...(given(/--heap[-_]growing[-_]percent/) ? [] : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`])];
}

function tuneV8(): void {
  for (const flag of v8TuningFlags(process.execArgv, process.env.NODE_OPTIONS)) v8.setFlagsFromString(flag);
}

function ownNamespace(): string {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  try {
    return fs.readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim();
  } catch {
    return 'default';
  }
}

export interface RunOperatorOptions {
  /** The controllers this image can run; `--controllers` picks among them (default: all). */
  readonly controllers: readonly ControllerDeclaration[];
  /** The command line. @default process.argv.slice(2) */
  readonly argv?: readonly string[];
  /** Field manager and Event reporter prefix. @default 'cdk8s-operator-kit' */
  readonly fieldManager?: string;
}

/**
 * Runs a reconciler for the given controllers until SIGTERM/SIGINT (resolves 0) or a lost
 * leader lease (resolves 1): the entry point of the kit's image and of a user's own — a user's
 * `main` passes their own declarations (e.g. from `constructController`), nothing else changes.
 *
 * @example
 * runOperator({ controllers: [staticSiteController] }).then(code => process.exit(code));
 */
export async function runOperator(options: RunOperatorOptions): Promise<number> {
  const byName = indexControllers(options.controllers);
  const argv = [...(options.argv ?? process.argv.slice(2))];
  const fieldManager = options.fieldManager ?? 'cdk8s-operator-kit';
  let flags: Flags;
  try {
    flags = parseFlags(argv, [...byName.keys()]);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${usage([...byName.keys()])}`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(usage([...byName.keys()]));
    return 0;
  }
  tuneV8();
  const logger = createLogger(flags.logLevel, undefined, flags.logFormat);
  const identity = `${process.env.POD_NAME ?? os.hostname()}_${randomBytes(4).toString('hex')}`;
  const metrics = new Metrics();
  let cluster: ReturnType<typeof loadKubeConfig>;
  try {
    cluster = loadKubeConfig({ path: flags.kubeconfig });
  } catch (err) {
    // Said in one line, with an exit code: an entry point that only does .then(process.exit)
    // must not end in an unhandled rejection's stack trace.
    logger.error({ kubeconfig: flags.kubeconfig }, err instanceof Error ? err.message : String(err));
    return 1;
  }
  let tracer: Tracer | undefined;
  try {
    tracer = startTracer(flags, { logger, identity, serviceName: fieldManager });
  } catch (err) {
    logger.error(err instanceof Error ? err.message : String(err));
    return 2;
  }
  const client = new HttpKubeClient(cluster, {
    fieldManager,
    observer: metrics.observeRequest,
    onRetry: metrics.observeRetry,
    ...(flags.kubeApiQps > 0
      ? { rateLimiter: new RateLimiter(flags.kubeApiQps, flags.kubeApiBurst), onThrottle: metrics.observeThrottle }
      : {}),
    userAgent: `cdk8s-operator-kit-reconciler (${identity})`,
    tracer,
  });
  const run: RunContext = { flags, client, logger, metrics, identity, fieldManager, server: cluster.server, tracer };
  try {
    // parseFlags accepts only the names of these controllers.
    return await runManager(
      run,
      flags.controllers.flatMap((name) => byName.get(name) ?? []),
    );
  } finally {
    await tracer?.shutdown();
  }
}

/**
 * The tracer, when `--otlp-endpoint` or the standard OTEL_EXPORTER_OTLP_ENDPOINT names where
 * traces go; none otherwise, and then its module is never loaded. `service.name` is
 * OTEL_SERVICE_NAME, else the operator's field manager.
 */
function startTracer(
  flags: Flags,
  shared: { logger: Logger; identity: string; serviceName: string },
): Tracer | undefined {
  const url = otlpTracesUrl(flags.otlpEndpoint);
  if (!url) return undefined;
  const serviceName = process.env.OTEL_SERVICE_NAME ?? shared.serviceName;
  shared.logger.info({ url, serviceName }, 'tracing: a trace per reconcile, sent over OTLP/HTTP');
  return loadOtlpTracer({
    url,
    serviceName,
    instanceId: shared.identity,
    logger: shared.logger.child({ component: 'tracing' }),
  });
}

/** What one run of the reconciler is made with. */
interface RunContext {
  readonly flags: Flags;
  readonly client: HttpKubeClient;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly identity: string;
  readonly fieldManager: string;
  readonly server: string;
  readonly tracer?: Tracer;
}

/** The manager with the selected controllers, storage migrations and webhooks, until a signal or a lost lease. */
async function runManager(run: RunContext, selected: readonly ControllerDeclaration[]): Promise<number> {
  const { flags, client, logger, metrics, identity } = run;
  const clusterScoped = flags.shards > 1 ? selected.filter((d) => !d.for.namespaced) : [];
  if (clusterScoped.length) {
    // Shards cut the namespaces; every shard would reconcile a cluster-scoped kind.
    const kinds = clusterScoped.map((d) => d.for.kind).join(', ');
    logger.error(
      { kinds },
      '--shards cuts namespaces: it cannot share out a cluster-scoped kind; run those controllers unsharded',
    );
    return 2;
  }
  const manager = newManager(flags, { client, logger, metrics, identity });
  for (const decl of selected) {
    // Each controller reports its Events under its own name, e.g. cdk8s-operator-kit/memcached.
    const events = logger.child({ component: 'events', controller: decl.name });
    const recorder = new EventRecorder(client, `${run.fieldManager}/${decl.name}`, identity, events);
    const { maxConcurrentReconciles, priorityQueue } = flags;
    const { tracer } = run;
    manager.add(
      buildController(manager, decl, {
        ...{ client, recorder, logger, metrics, tracer },
        ...{ maxConcurrentReconciles, priorityQueue },
      }),
    );
  }
  // The first line of the log, before what the webhooks have to say.
  const namespaces = flags.namespaces ?? '(all)';
  const { controllers, leaderElect: leaderElection, shards } = flags;
  logger.info({ controllers, namespaces, leaderElection, shards, identity }, 'starting manager');
  addStorageMigrations(manager, selected, flags, { client, logger });
  let webhooks: { close(): Promise<void> } | undefined;
  try {
    webhooks = flags.webhookLoopback
      ? await startLoopbackWebhooks(flags, selected, { client, logger, manager, server: run.server })
      : await startWebhooks(flags, selected, { client, logger, manager });
  } catch (err) {
    logger.error({ err }, 'cannot serve the webhooks');
    return 1;
  }
  const stop = stopOnSignals(logger);
  try {
    return await manager.run(stop.signal);
  } catch (err) {
    logger.error({ err }, 'manager failed');
    return 1;
  } finally {
    await webhooks?.close();
    await new Promise<void>((r) => {
      logger.flush(() => {
        r();
      });
    });
  }
}

/** How often a self-managed webhook certificate is checked (and renewed when a third of its life is left). */
const WEBHOOK_CERTIFICATE_CHECK_MS = 60 * 60 * 1000;

/**
 * The admission webhook server, when a selected controller has `validate` or `default` hooks and
 * a certificate is configured: a mounted one (`--webhook-cert-path`), or a self-managed one kept
 * in `--webhook-cert-secret` and checked every hour. Without either, no hook is served (the
 * Operator construct passes them only with `admissionWebhooks`). It serves in every replica,
 * leader or not.
 */
async function startWebhooks(
  flags: Flags,
  decls: readonly ControllerDeclaration[],
  shared: { client: KubeClient; logger: Logger; manager: Manager },
): Promise<{ close(): Promise<void> } | undefined> {
  const { client, manager } = shared;
  const logger = shared.logger.child({ component: 'webhooks' });
  const server = webhookServer(decls, manager, logger);
  if (!server.hasWork || flags.webhookBindAddress === '0') return undefined;
  const { host, port } = parseBindAddress(flags.webhookBindAddress);
  const certificate = webhookCertificateSource(flags, decls, server.converting, { client, logger });
  if (!certificate) {
    // Not asked for (the Operator construct's admissionWebhooks is off): the hooks are not served.
    logger.info('webhooks not served: no --webhook-cert-path or --webhook-cert-secret');
    return undefined;
  }
  await server.listen(host, port, await certificate());
  // A mounted Secret is updated in place when cert-manager renews it; a self-managed certificate
  // is renewed here when a third of its life is left.
  const timer = setInterval(() => {
    certificate().then(
      (c) => {
        server.setCertificate(c);
      },
      (err: unknown) => {
        logger.error({ err }, 'could not renew the webhook certificate; trying again in an hour');
      },
    );
  }, WEBHOOK_CERTIFICATE_CHECK_MS);
  timer.unref();
  return { close: () => (clearInterval(timer), server.close()) };
}

/** The server of the controllers' admission hooks (reading the manager's caches) and conversions. */
function webhookServer(decls: readonly ControllerDeclaration[], manager: Manager, logger: Logger): WebhookServer {
  const contexts = new Map(
    decls.filter((d) => d.validate !== undefined).map((d) => [d, admissionContextFor(manager, d)] as const),
  );
  return new WebhookServer(
    decls,
    (decl, object) => {
      const context = contexts.get(decl);
      if (!context) throw new Error(`controller ${decl.name} has no validate hook`);
      return context(object);
    },
    logger,
  );
}

/**
 * `--webhook-loopback`: the webhooks served on 127.0.0.1 with an in-memory certificate for the
 * webhook Services' names, and those Services routed here by the local control plane's egress
 * proxy — for a reconciler run out of cluster, which no Service can reach otherwise. The CRDs
 * and webhook configurations keep their Services (see loopback-webhooks.ts).
 */
async function startLoopbackWebhooks(
  flags: Flags,
  decls: readonly ControllerDeclaration[],
  shared: { client: KubeClient; logger: Logger; manager: Manager; server: string },
): Promise<{ close(): Promise<void> } | undefined> {
  const logger = shared.logger.child({ component: 'webhooks' });
  const server = webhookServer(decls, shared.manager, logger);
  if (!server.hasWork || flags.webhookBindAddress === '0') return undefined;
  const routes = egressRoutesBeside(flags.kubeconfig);
  if (!isLoopbackServer(shared.server) || !routes)
    throw new Error(
      `--webhook-loopback serves the webhooks through the local control plane's Service routes (cdk8s-operator-kit cluster); ${shared.server} has none beside its kubeconfig (deploy the operator to serve its webhooks there)`,
    );
  const callers = await readCallers(shared.client, callersOf(flags, decls, server.converting));
  const certificate = loopbackCertificate(servicesCalled(callers).map(serviceHost));
  const port = await server.listen(LOOPBACK_HOST, parseBindAddress(flags.webhookBindAddress).port, certificate);
  await routeToLoopback(shared.client, { routes, port, cert: certificate.cert }, callers, logger);
  return server;
}

/**
 * The objects that call the webhooks, by name: the configuration of each kind of hook there is
 * (the Operator construct makes one only for hooks there are) and the converting kinds' CRDs.
 */
function callersOf(flags: Flags, decls: readonly ControllerDeclaration[], converting: readonly KindDescriptor[]) {
  return {
    validatingConfiguration: decls.some((d) => d.validate !== undefined) ? flags.webhookConfiguration : undefined,
    mutatingConfiguration: decls.some((d) => d.default !== undefined) ? flags.webhookConfiguration : undefined,
    conversionCrds: converting.map((k) => k.crdName),
  };
}

/** Where the webhook server's certificate comes from: a mounted one, a self-managed one, or none. */
function webhookCertificateSource(
  flags: Flags,
  decls: readonly ControllerDeclaration[],
  converting: readonly KindDescriptor[],
  shared: { client: KubeClient; logger: Logger },
): (() => Promise<ServingCertificate>) | undefined {
  const { webhookCertPath, webhookCertSecret } = flags;
  if (webhookCertPath) return () => Promise.resolve().then(() => mountedCertificate(webhookCertPath));
  if (!webhookCertSecret) return undefined;
  const options = {
    ...shared,
    namespace: ownNamespace(),
    secretName: webhookCertSecret,
    hosts: flags.webhookCertHosts,
    ...callersOf(flags, decls, converting),
  };
  return () => ensureWebhookCertificate(options);
}

/**
 * For each converting kind, the leader rewrites objects stored in an older version once (see
 * storage-migration.ts). That lists the kind everywhere, so an operator confined to one
 * namespace leaves it to a cluster-wide one, and says so.
 */
function addStorageMigrations(
  manager: Manager,
  decls: readonly ControllerDeclaration[],
  flags: Flags,
  shared: { client: KubeClient; logger: Logger },
): void {
  const logger = shared.logger.child({ component: 'storage-migration' });
  for (const kind of convertingKinds(decls)) {
    if (flags.namespaces) {
      logger.debug(
        { crd: kind.crdName, namespaces: flags.namespaces },
        'no storage migration: it needs to list every namespace',
      );
      continue;
    }
    manager.addLeaderTask(`storage-migration/${kind.crdName}`, async (signal) => {
      await migrateStorage(shared.client, kind, logger, signal);
    });
  }
}

/** The controllers by name; throws for two of one name, or one that would do nothing. */
function indexControllers(controllers: readonly ControllerDeclaration[]): Map<string, ControllerDeclaration> {
  const byName = new Map<string, ControllerDeclaration>();
  for (const c of controllers) {
    if (byName.has(c.name))
      throw new Error(`two controllers are named ${JSON.stringify(c.name)}; names must be unique`);
    if (!c.render && !c.status)
      throw new Error(`controller ${c.name} has neither render nor status: it would do nothing`);
    byName.set(c.name, c);
  }
  return byName;
}

/** The manager the flags describe: scope, endpoints, resync, leader election. */
function newManager(
  flags: Flags,
  shared: { client: KubeClient; logger: Logger; metrics: Metrics; identity: string },
): Manager {
  const { client, logger, metrics, identity } = shared;
  return new Manager({
    client,
    logger,
    metrics,
    namespaces: flags.namespaces,
    metricsBindAddress: flags.metricsBindAddress,
    metricsSecurity: flags.metricsSecure
      ? { authorizer: new MetricsAuthorizer(client), certPath: flags.metricsCertPath }
      : undefined,
    healthProbeBindAddress: flags.healthProbeBindAddress,
    watchStallTimeoutMs: flags.watchStallTimeoutMs,
    syncPeriodMs: flags.syncPeriodMs,
    shards: flags.shards,
    warmStandby: flags.warmStandby,
    leaderElection: flags.leaderElect
      ? {
          namespace: flags.leaderElectionNamespace ?? ownNamespace(),
          name: flags.leaderElectionId,
          identity,
          leaseDurationMs: flags.leaseDurationMs,
          renewDeadlineMs: flags.renewDeadlineMs,
          retryPeriodMs: flags.retryPeriodMs,
        }
      : undefined,
  });
}

/** SIGTERM or SIGINT aborts the returned controller (a graceful stop); a second one exits at once. */
function stopOnSignals(logger: Logger): AbortController {
  const stop = new AbortController();
  const onSignal = (signal: string) => {
    if (stop.signal.aborted) {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(1);
    }
    logger.info({ signal }, 'signal received: shutting down gracefully');
    stop.abort();
  };
  process.on('SIGTERM', () => {
    onSignal('SIGTERM');
  });
  process.on('SIGINT', () => {
    onSignal('SIGINT');
  });
  return stop;
}
