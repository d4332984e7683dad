/**
 * A kind that is not one of the kit's six, written only with the kit's public API: a StaticSite
 * is some pages, served by nginx. The construct below is all there is to its operator —
 * `constructController` turns it into a controller, `ConstructOperator` into CRD, RBAC and
 * Deployment, and `runOperator` (main.ts) into the reconciler.
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
} from '../../constructs';

export const staticSiteSpecSchema = t.object(
  {
    pages: t.map(t.string(), {
      required: true,
      description: 'The files to serve, by name, e.g. {"index.html": "<h1>Hi</h1>"}.',
    }),
    replicas: t.integer({ default: 1, minimum: 1, maximum: 20, description: 'nginx pods.' }),
    host: t.string({
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
      description: 'Serve on this host through an Ingress. Omit for none.',
    }),
    ingressClassName: t.string({
      minLength: 1,
      description: 'IngressClass of the Ingress. Default: the cluster default.',
    }),
  },
  { description: 'StaticSiteSpec: pages and how to serve them.' },
);

export const staticSiteKind = new CustomResourceKind({
  group: 'sites.example.com',
  kind: 'StaticSite',
  versions: ['v1alpha1'],
  description:
    'StaticSite serves a few pages with nginx: a ConfigMap of pages, a Deployment, a Service and, with a host, an Ingress.',
  spec: staticSiteSpecSchema,
  status: constructStatusSchema(),
  shortNames: ['site'],
  dns1035Name: true,
  printerColumns: [
    { name: 'Host', type: 'string', jsonPath: '.spec.host' },
    // A condition as a column: the JSONPath filter kubectl evaluates.
    { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
  ],
});

export type StaticSite = CustomResource<typeof staticSiteSpecSchema, ReturnType<typeof constructStatusSchema>>;

/** The unprivileged nginx image serves on 8080 as a non-root user (uid 101). */
const NGINX = { image: 'nginxinc/nginx-unprivileged:1.27-alpine', port: 8080, uid: 101 };

export interface StaticSiteResourcesProps {
  readonly site: Pick<StaticSite, 'metadata' | 'spec'>;
  readonly owner?: OwnerReferenceLike;
}

/** What a StaticSite is made of. Usable in any chart, with or without the operator. */
export class StaticSiteResources extends Construct {
  constructor(scope: Construct, id: string, props: StaticSiteResourcesProps) {
    super(scope, id);
    const {
      metadata: { name, namespace },
      spec,
    } = props.site;
    const labelProps = { name: 'static-site', instance: name, component: 'web', managedBy: 'static-site-operator' };
    const meta = {
      name,
      namespace,
      labels: standardLabels(labelProps),
      ownerReferences: props.owner ? [props.owner] : undefined,
    };
    const selector = selectorLabels(labelProps);
    const pages = spec.pages;

    new k8s.KubeConfigMap(this, 'Pages', { metadata: meta, data: pages });
    new k8s.KubeDeployment(this, 'Deployment', {
      metadata: meta,
      spec: {
        replicas: spec.replicas,
        selector: { matchLabels: selector },
        template: {
          // New pages roll the pods, so every replica serves the same version.
          metadata: {
            labels: selector,
            annotations: {
              'sites.example.com/pages-sha256': createHash('sha256').update(JSON.stringify(pages)).digest('hex'),
            },
          },
          spec: {
            automountServiceAccountToken: false,
            securityContext: restrictedPodSecurityContext(NGINX.uid),
            containers: [
              {
                name: 'nginx',
                image: NGINX.image,
                ports: [{ name: 'http', containerPort: NGINX.port, protocol: 'TCP' }],
                readinessProbe: { httpGet: { path: '/', port: k8s.IntOrString.fromString('http') } },
                resources: {
                  requests: { cpu: k8s.Quantity.fromString('10m'), memory: k8s.Quantity.fromString('16Mi') },
                  limits: { memory: k8s.Quantity.fromString('64Mi') },
                },
                securityContext: restrictedContainerSecurityContext(),
                volumeMounts: [
                  { name: 'pages', mountPath: '/usr/share/nginx/html', readOnly: true },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'pages', configMap: { name } },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    });
    new k8s.KubeService(this, 'Service', {
      metadata: meta,
      spec: {
        selector,
        ports: [{ name: 'http', port: 80, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
      },
    });
    if (spec.host) {
      new k8s.KubeIngress(this, 'Ingress', {
        metadata: meta,
        spec: {
          ingressClassName: spec.ingressClassName,
          rules: [
            {
              host: spec.host,
              http: {
                paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { name: 'http' } } } }],
              },
            },
          ],
        },
      });
    }
  }
}

/** The whole controller: no reconcile code. */
export const staticSiteController = constructController({
  kind: staticSiteKind,
  render: (scope, site, { owner }) => new StaticSiteResources(scope, 'site', { site, owner }),
  examples: [
    { pages: { 'index.html': '<h1>Hello</h1>' }, replicas: 1, host: 'www.example.com' },
    { pages: { 'index.html': '<h1>Hello</h1>' }, replicas: 1 },
  ],
});
