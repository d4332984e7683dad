import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { selectorLabels, standardLabels } from '../core/labels';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import { mebibytes, type MemcachedSpec } from './api';

/** memcached's own default item memory, and the schema's. */
const DEFAULT_MEMORY = '64Mi';

/** The uid of the `memcache` user in the official memcached image. */
const MEMCACHE_UID = 11211;

export interface MemcachedDeploymentProps {
  /** The Memcached resource's name; the Deployment takes the same name. */
  readonly name: string;
  /** @default the chart's namespace, if it has one */
  readonly namespace?: string;
  /** The spec, with the API server's defaults applied (`memory` may be left out: 64Mi). */
  readonly spec: Omit<MemcachedSpec, 'memory'> & Partial<Pick<MemcachedSpec, 'memory'>>;
  /** Controller owner reference to the Memcached, so garbage collection removes the Deployment. @default none (a static render) */
  readonly owner?: k8s.OwnerReference;
  /** @default 'memcached-operator' */
  readonly managedBy?: string;
}

/** The labels of a Memcached's pods, which its Deployment selects on. */
export function memcachedSelectorLabels(name: string): Record<string, string> {
  return selectorLabels({ name: 'memcached', instance: name, component: 'cache', managedBy: '' });
}

/**
 * The Deployment that runs a Memcached: `size` replicas of the image, TCP probes on the port,
 * resource requests and a restricted security context.
 *
 * It is the desired state the reconciler applies for each Memcached resource (rendered in a
 * throwaway chart), and it can equally be used in a static chart, without the operator.
 */
export class MemcachedDeployment extends Construct {
  readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: MemcachedDeploymentProps) {
    super(scope, id);
    const labels = standardLabels({
      name: 'memcached',
      instance: props.name,
      component: 'cache',
      managedBy: props.managedBy ?? 'memcached-operator',
    });
    const port = props.spec.containerPort;
    // memcached keeps items in -m MiB; the pod needs that plus its connections and code.
    const itemMebibytes = mebibytes(props.spec.memory ?? DEFAULT_MEMORY);
    const portRef = k8s.IntOrString.fromString('memcached');
    this.deployment = new k8s.KubeDeployment(this, 'Resource', {
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels,
        ownerReferences: props.owner ? [props.owner] : undefined,
      },
      spec: {
        replicas: props.spec.size,
        selector: { matchLabels: memcachedSelectorLabels(props.name) },
        template: {
          metadata: { labels },
          spec: {
            // memcached never talks to the API server.
            automountServiceAccountToken: false,
            securityContext: restrictedPodSecurityContext(MEMCACHE_UID),
            containers: [
              {
                name: 'memcached',
                image: props.spec.image,
                // -p: memcached listens on 11211 unless told, whatever port the pod declares.
                args: ['-p', String(port), '-m', String(itemMebibytes), '-o', 'modern', '-v'],
                ports: [{ name: 'memcached', containerPort: port, protocol: 'TCP' }],
                livenessProbe: { tcpSocket: { port: portRef }, initialDelaySeconds: 10, periodSeconds: 10 },
                readinessProbe: { tcpSocket: { port: portRef }, initialDelaySeconds: 2, periodSeconds: 5 },
                resources: {
                  requests: {
                    cpu: k8s.Quantity.fromString('50m'),
                    memory: k8s.Quantity.fromString(`${itemMebibytes}Mi`),
                  },
                  limits: { memory: k8s.Quantity.fromString(`${2 * itemMebibytes}Mi`) },
                },
                securityContext: restrictedContainerSecurityContext(),
              },
            ],
          },
        },
      },
    });
  }
}
