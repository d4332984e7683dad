/**
 * The WebSite kind: its schema, what a WebSite becomes (a construct), and the controller that
 * keeps the cluster matching it. Change the spec and the construct; the CRD, RBAC and reconciler
 * follow.
 */
import { type ApiObject, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  addSample,
  constructController,
  constructStatusSchema,
  type CustomResource,
  CustomResourceKind,
  type OwnerReferenceLike,
  restrictPodSecurity,
  t,
} from 'cdk8s-operator-kit';

export const webSiteSpec = t.object(
  {
    image: t.string({
      default: 'nginxinc/nginx-unprivileged:1.27-alpine',
      minLength: 1,
      description: 'The container image to run.',
    }),
    replicas: t.integer({ default: 1, minimum: 0, maximum: 10, description: 'Pods.' }),
    port: t.integer({ default: 8080, minimum: 1, maximum: 65535, description: 'The port it serves on.' }),
  },
  { description: 'WebSiteSpec: what to run and how many.' },
);

export const webSiteKind = new CustomResourceKind({
  group: 'sites.example.com',
  kind: 'WebSite',
  versions: ['v1alpha1'],
  description: 'WebSite runs an image as a Deployment behind a Service.',
  spec: webSiteSpec,
  status: constructStatusSchema(),
  dns1035Name: true,
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
  ],
});

export type WebSite = CustomResource<typeof webSiteSpec, ReturnType<typeof constructStatusSchema>>;

export interface WebSiteResourcesProps {
  readonly webSite: Pick<WebSite, 'metadata' | 'spec'>;
  /** Makes the WebSite own what this makes, so deleting it deletes them. */
  readonly owner?: OwnerReferenceLike;
}

/**
 * What a WebSite is made of, written with cdk8s-plus: usable in any chart, with or without the
 * operator. cdk8s-plus derives the pods' selector from this construct's address, and the
 * reconciler renders each WebSite at an address of its own, so two never select each other's pods.
 */
export class WebSiteResources extends Construct {
  readonly deployment: kplus.Deployment;
  readonly service: kplus.Service;

  constructor(scope: Construct, id: string, props: WebSiteResourcesProps) {
    super(scope, id);
    const { name, namespace } = props.webSite.metadata;
    const { image, replicas, port } = props.webSite.spec;
    const labels = { 'app.kubernetes.io/name': 'web-site', 'app.kubernetes.io/instance': name };
    const metadata = { name, namespace, labels, ownerReferences: props.owner ? [props.owner] : undefined };
    this.deployment = new kplus.Deployment(this, 'deployment', {
      metadata,
      replicas,
      podMetadata: { labels },
      containers: [
        {
          name: 'web-site',
          image,
          ports: [{ name: 'http', number: port }],
          // cdk8s-plus runs it as non-root, with a read-only root and no privilege escalation;
          // the unprivileged nginx image's user is 101.
          securityContext: { user: 101, group: 101 },
          resources: {
            cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(500) },
            memory: { request: Size.mebibytes(16), limit: Size.mebibytes(128) },
          },
          volumeMounts: [{ path: '/tmp', volume: kplus.Volume.fromEmptyDir(this, 'tmp', 'tmp') }],
        },
      ],
    });
    // The rest of the restricted Pod Security level (a seccomp profile, every capability dropped).
    restrictPodSecurity(this.deployment);
    this.service = new kplus.Service(this, 'service', {
      metadata,
      selector: this.deployment,
      ports: [{ name: 'http', port: 80, targetPort: port }],
    });
  }
}

/** The reconciler renders each WebSite with the construct, applies the result and prunes the rest. */
export const webSiteController = constructController({
  kind: webSiteKind,
  render: (scope, webSite, { owner }) => new WebSiteResources(scope, 'web-site', { webSite, owner }),
  // Specs as the API server returns them (defaults applied): the RBAC is derived from what they render.
  examples: [{ image: 'nginxinc/nginx-unprivileged:1.27-alpine', replicas: 1, port: 8080 }],
});

/** A sample WebSite, checked against the CRD's schema when synthesized. */
export function addWebSiteSample(scope: Construct): ApiObject {
  return addSample(scope, webSiteKind, 'web-site-sample', { replicas: 2 });
}
