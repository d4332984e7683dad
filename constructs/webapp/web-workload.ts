import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { selectorLabels, standardLabels } from '../core/labels';
import { NON_ROOT_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import type { Application, WebApp } from './api';

/**
 * What both web kinds mean, in one shape: Application and WebApp are two spellings of "run this
 * image behind a Service, maybe an Ingress". Each kind maps its spec onto this model, and one
 * construct and one reconcile path serve both, so they cannot behave differently.
 */
export interface WebWorkloadModel {
  readonly name: string;
  readonly namespace?: string;
  /** `application` or `webapp`: the app.kubernetes.io/name of the children. */
  readonly appName: string;
  readonly image: string;
  readonly replicas: number;
  readonly port: number;
  readonly service: { readonly type: string; readonly port: number };
  readonly ingress?: {
    readonly host: string;
    readonly className?: string;
    readonly path: string;
    readonly tlsSecretName?: string;
  };
}

export function applicationModel(app: Pick<Application, 'metadata' | 'spec'>): WebWorkloadModel {
  const s = app.spec;
  return {
    name: app.metadata.name,
    namespace: app.metadata.namespace,
    appName: 'application',
    image: s.image,
    replicas: s.replicas,
    port: s.port,
    // The API server defaults `service` and its type.
    service: { type: s.service.type, port: s.service.port ?? s.port },
    ingress: s.ingress
      ? {
          host: s.ingress.host,
          className: s.ingress.className,
          path: s.ingress.path,
          tlsSecretName: s.ingress.tlsSecretName,
        }
      : undefined,
  };
}

export function webAppModel(w: Pick<WebApp, 'metadata' | 'spec'>): WebWorkloadModel {
  const s = w.spec;
  return {
    name: w.metadata.name,
    namespace: w.metadata.namespace,
    appName: 'webapp',
    image: s.image,
    replicas: s.replicas,
    port: s.port,
    service: { type: 'ClusterIP', port: s.port },
    ingress: s.domain ? { host: s.domain, path: '/' } : undefined,
  };
}

/** The URL a workload is reached at. */
export function workloadUrl(m: WebWorkloadModel): string {
  if (m.ingress) return `${m.ingress.tlsSecretName ? 'https' : 'http'}://${m.ingress.host}${m.ingress.path}`;
  return `http://${m.name}.${m.namespace}.svc:${m.service.port}`;
}

export interface WebWorkloadProps {
  readonly model: WebWorkloadModel;
  /** @default none (a static render) */
  readonly owner?: k8s.OwnerReference;
  /** @default 'webapp-operator' */
  readonly managedBy?: string;
}

/** A Deployment, a Service and (when asked) an Ingress for a web workload. */
export class WebWorkload extends Construct {
  readonly deployment: k8s.KubeDeployment;
  readonly service: k8s.KubeService;
  readonly ingress?: k8s.KubeIngress;

  constructor(scope: Construct, id: string, props: WebWorkloadProps) {
    super(scope, id);
    const m = props.model;
    const labelProps = {
      name: m.appName,
      instance: m.name,
      component: 'web',
      managedBy: props.managedBy ?? 'webapp-operator',
    };
    const labels = standardLabels(labelProps);
    const selector = selectorLabels(labelProps);
    const metadata = {
      name: m.name,
      namespace: m.namespace,
      labels,
      ownerReferences: props.owner ? [props.owner] : undefined,
    };
    const http = k8s.IntOrString.fromString('http');
    this.deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata,
      spec: {
        replicas: m.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            securityContext: webPodSecurityContext(m.port),
            containers: [webContainer(m)],
            volumes: WEB_SERVER_SCRATCH.map((s) => ({ name: s.name, emptyDir: {} })),
          },
        },
      },
    });
    this.service = new k8s.KubeService(this, 'Service', {
      metadata,
      spec: {
        type: m.service.type,
        selector,
        ports: [{ name: 'http', port: m.service.port, targetPort: http, protocol: 'TCP' }],
      },
    });
    if (m.ingress)
      this.ingress = new k8s.KubeIngress(this, 'Ingress', { metadata, spec: ingressSpec(m.name, m.ingress) });
  }
}

/**
 * Where web servers write at run time, each an emptyDir so the root file system stays read-only:
 * temporary files, the run-time directory of pid files (`/var/run` is a link to it in the common
 * images), and nginx's temporary paths, which its official image keeps writable only by its own
 * user. Run as any other uid, nginx:alpine exits at start without these.
 */
export const WEB_SERVER_SCRATCH = [
  { name: 'tmp', mountPath: '/tmp' },
  { name: 'run', mountPath: '/run' },
  { name: 'nginx-cache', mountPath: '/var/cache/nginx' },
] as const;

/** The first port an unprivileged process may bind; below it only root (or CAP_NET_BIND_SERVICE) may. */
const FIRST_UNPRIVILEGED_PORT = 1024;

/**
 * Restricted, as non-root uid 65532. A port below 1024 (nginx's 80) is opened to that uid by the
 * pod's own network namespace, through the `net.ipv4.ip_unprivileged_port_start` sysctl, which
 * Kubernetes counts safe and the restricted profile allows: no capability, nothing on the node.
 */
function webPodSecurityContext(port: number): k8s.PodSecurityContext {
  const context = restrictedPodSecurityContext(NON_ROOT_UID);
  if (port >= FIRST_UNPRIVILEGED_PORT) return context;
  return { ...context, sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: String(port) }] };
}

/** The web server: restricted with a read-only root, probed on its port, writing only where web servers write. */
function webContainer(m: WebWorkloadModel): k8s.Container {
  const http = k8s.IntOrString.fromString('http');
  return {
    name: 'app',
    image: m.image,
    ports: [{ name: 'http', containerPort: m.port, protocol: 'TCP' }],
    readinessProbe: { tcpSocket: { port: http }, periodSeconds: 5 },
    livenessProbe: { tcpSocket: { port: http }, initialDelaySeconds: 10, periodSeconds: 10 },
    resources: {
      requests: { cpu: k8s.Quantity.fromString('50m'), memory: k8s.Quantity.fromString('64Mi') },
      limits: { memory: k8s.Quantity.fromString('256Mi') },
    },
    securityContext: restrictedContainerSecurityContext(),
    volumeMounts: WEB_SERVER_SCRATCH.map((s) => ({ name: s.name, mountPath: s.mountPath })),
  };
}

/** One rule: the host and path prefix to the Service's http port, with TLS when a secret is named. */
function ingressSpec(service: string, ingress: NonNullable<WebWorkloadModel['ingress']>): k8s.IngressSpec {
  return {
    ingressClassName: ingress.className,
    tls: ingress.tlsSecretName ? [{ hosts: [ingress.host], secretName: ingress.tlsSecretName }] : undefined,
    rules: [
      {
        host: ingress.host,
        http: {
          paths: [
            { path: ingress.path, pathType: 'Prefix', backend: { service: { name: service, port: { name: 'http' } } } },
          ],
        },
      },
    ],
  };
}
