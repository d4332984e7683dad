/**
 * A kind written only with the kit's public API, with the parts a real one has: a Redis
 * StatefulSet with its volumes, a Job that seeds it once it runs, and a webdis gateway
 * (Deployment and Service) that serves the seeded data. The controller has no status code: the
 * runtime judges each child (pods, claims, the Job) and says in `Available`, `Progressing` and
 * `Degraded` what is not ready and why. `waitsFor` orders the children: the seed Job is made
 * once Redis is ready, and the gateway once the Job has completed.
 */
import { createHash } from 'node:crypto';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  constructController,
  constructStatusSchema,
  type CustomResource,
  CustomResourceKind,
  type OwnerReferenceLike,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
  selectorLabels,
  standardLabels,
  t,
  waitsFor,
} from '../../constructs';

export const keyValueStoreSpecSchema = t.object(
  {
    replicas: t.integer({ default: 1, minimum: 1, maximum: 9, description: 'Redis pods.' }),
    image: t.string({ default: 'redis:7.4-alpine', description: 'The Redis image.' }),
    storage: t.object(
      {
        size: t.quantity({ default: '1Gi', description: 'Each pod’s volume.' }),
        storageClassName: t.string({
          minLength: 1,
          description: 'StorageClass of the volumes. Default: the cluster default.',
        }),
      },
      { default: {}, description: 'The volume each Redis pod keeps its data on.' },
    ),
    seed: t.map(t.string(), {
      default: {},
      description: 'Keys and values written once Redis runs, before the gateway serves.',
    }),
    nodeSelector: t.map(t.string(), { description: 'Nodes the pods may run on, by label.' }),
  },
  { description: 'KeyValueStoreSpec: a Redis store, its seed data and its HTTP gateway.' },
);

export const keyValueStoreKind = new CustomResourceKind({
  group: 'kv.example.com',
  kind: 'KeyValueStore',
  versions: ['v1alpha1'],
  description: 'KeyValueStore is Redis with its data seeded and served over HTTP by webdis.',
  spec: keyValueStoreSpecSchema,
  status: constructStatusSchema(),
  shortNames: ['kvs'],
  dns1035Name: true,
  printerColumns: [
    { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
    { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Degraded")].reason' },
  ],
});

export type KeyValueStore = CustomResource<typeof keyValueStoreSpecSchema, ReturnType<typeof constructStatusSchema>>;

const REDIS_PORT = 6379;
const GATEWAY = { image: 'nicolas/webdis:0.1.22', port: 7379 };
/** The official Redis image runs as this user. */
const REDIS_UID = 999;

export interface KeyValueStoreResourcesProps {
  readonly store: Pick<KeyValueStore, 'metadata' | 'spec'>;
  readonly owner?: OwnerReferenceLike;
}

/** What a KeyValueStore is made of. Usable in any chart, with or without the operator. */
export class KeyValueStoreResources extends Construct {
  constructor(scope: Construct, id: string, props: KeyValueStoreResourcesProps) {
    super(scope, id);
    const { name, namespace } = props.store.metadata;
    const { spec } = props.store;
    const meta = (component: string, suffix = '') => ({
      name: `${name}${suffix}`,
      namespace,
      labels: standardLabels(labelsOf(name, component)),
      ownerReferences: props.owner ? [props.owner] : undefined,
    });
    const pod = { securityContext: restrictedPodSecurityContext(REDIS_UID), nodeSelector: spec.nodeSelector };
    const container = { securityContext: restrictedContainerSecurityContext(), resources: SMALL };

    const redisSelector = selectorLabels(labelsOf(name, 'redis'));
    new k8s.KubeService(this, 'Headless', {
      metadata: meta('redis'),
      spec: { clusterIp: 'None', selector: redisSelector, ports: [{ name: 'redis', port: REDIS_PORT }] },
    });
    const redis = new k8s.KubeStatefulSet(this, 'Redis', {
      metadata: meta('redis'),
      spec: {
        serviceName: name,
        replicas: spec.replicas,
        selector: { matchLabels: redisSelector },
        template: {
          metadata: { labels: redisSelector },
          spec: {
            ...pod,
            automountServiceAccountToken: false,
            containers: [
              {
                ...container,
                name: 'redis',
                image: spec.image,
                args: ['--appendonly', 'yes'],
                ports: [{ name: 'redis', containerPort: REDIS_PORT }],
                readinessProbe: { exec: { command: ['redis-cli', 'ping'] } },
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: spec.storage.storageClassName,
              resources: { requests: { storage: k8s.Quantity.fromString(String(spec.storage.size)) } },
            },
          },
        ],
      },
    });

    // The seed Job's pod template cannot change: a new seed is a new Job, named for its content.
    const seedCommand = ['redis-cli', '-h', `${name}-0.${name}`, 'MSET', ...Object.entries(spec.seed).flat()];
    const seedHash = createHash('sha256')
      .update(JSON.stringify([seedCommand, spec.image, spec.nodeSelector ?? {}]))
      .digest('hex')
      .slice(0, 8);
    const seed = new k8s.KubeJob(this, 'Seed', {
      metadata: meta('seed', `-seed-${seedHash}`),
      spec: {
        backoffLimit: 3,
        template: {
          metadata: { labels: selectorLabels(labelsOf(name, 'seed')) },
          spec: {
            ...pod,
            automountServiceAccountToken: false,
            restartPolicy: 'Never',
            containers: [{ ...container, name: 'seed', image: spec.image, command: seedCommand }],
          },
        },
      },
    });

    const gatewaySelector = selectorLabels(labelsOf(name, 'gateway'));
    const gateway = new k8s.KubeDeployment(this, 'Gateway', {
      metadata: meta('gateway', '-gateway'),
      spec: {
        selector: { matchLabels: gatewaySelector },
        template: {
          metadata: { labels: gatewaySelector },
          spec: {
            ...pod,
            automountServiceAccountToken: false,
            containers: [
              {
                ...container,
                name: 'webdis',
                image: GATEWAY.image,
                env: [{ name: 'REDIS_HOST', value: name }],
                ports: [{ name: 'http', containerPort: GATEWAY.port }],
              },
            ],
          },
        },
      },
    });
    new k8s.KubeService(this, 'GatewayService', {
      metadata: meta('gateway', '-gateway'),
      spec: {
        selector: gatewaySelector,
        ports: [{ name: 'http', port: 80, targetPort: k8s.IntOrString.fromString('http') }],
      },
    });

    // Seed once Redis runs; serve once seeded.
    waitsFor(seed, redis);
    waitsFor(gateway, seed);
  }
}

const SMALL = {
  requests: { cpu: k8s.Quantity.fromString('10m'), memory: k8s.Quantity.fromString('32Mi') },
  limits: { memory: k8s.Quantity.fromString('128Mi') },
};

function labelsOf(instance: string, component: string) {
  return { name: 'key-value-store', instance, component, managedBy: 'key-value-store-operator' };
}

/** The whole controller: no reconcile or status code. */
export const keyValueStoreController = constructController({
  kind: keyValueStoreKind,
  render: (scope, store, { owner }) => new KeyValueStoreResources(scope, 'store', { store, owner }),
  examples: [{ replicas: 1, image: 'redis:7.4-alpine', storage: { size: '1Gi' }, seed: { greeting: 'hello' } }],
});
