/**
 * A kind written the way cdk8s teams write every other chart: with cdk8s-plus L2 constructs. A
 * BlogSite is a few posts in a ConfigMap, served by an unprivileged nginx Deployment behind a
 * Service, with a NetworkPolicy that lets only the Service's port in. No selector, label or
 * security context is spelled out: cdk8s-plus derives them, and the kit renders each resource at
 * a construct address of its own, so two BlogSites never select each other's pods.
 */
import { Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  constructController,
  constructStatusSchema,
  type CustomResource,
  CustomResourceKind,
  type OwnerReferenceLike,
  restrictPodSecurity,
  t,
} from '../../constructs';

export const blogSiteSpecSchema = t.object(
  {
    posts: t.map(t.string(), {
      required: true,
      description: 'The pages to serve, by file name, e.g. {"index.html": "<h1>Hello</h1>"}.',
    }),
    replicas: t.integer({ default: 1, minimum: 0, maximum: 20, description: 'nginx pods.' }),
    podLabels: t.map(t.string(), {
      description: 'Labels for the pods besides the ones cdk8s-plus selects them by (cost allocation, policies).',
    }),
    image: t.string({
      default: 'nginxinc/nginx-unprivileged:1.27-alpine',
      minLength: 1,
      description: 'The nginx image; it must serve on 8080 as a non-root user.',
    }),
  },
  { description: 'BlogSiteSpec: the posts and how many pods serve them.' },
);

export const blogSiteKind = new CustomResourceKind({
  group: 'blogs.example.com',
  kind: 'BlogSite',
  versions: ['v1alpha1'],
  description: 'BlogSite serves a few posts with nginx; its children are written with cdk8s-plus L2 constructs.',
  spec: blogSiteSpecSchema,
  status: constructStatusSchema(),
  dns1035Name: true,
  // kubectl scale and HorizontalPodAutoscalers: the runtime writes status.replicas and status.selector.
  scale: { specReplicasPath: '.spec.replicas' },
  printerColumns: [{ name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' }],
});

export type BlogSite = CustomResource<typeof blogSiteSpecSchema, ReturnType<typeof constructStatusSchema>>;

export interface BlogSiteResourcesProps {
  readonly site: Pick<BlogSite, 'metadata' | 'spec'>;
  readonly owner?: OwnerReferenceLike;
}

/** What a BlogSite is made of, in cdk8s-plus: usable in any chart, with or without the operator. */
export class BlogSiteResources extends Construct {
  constructor(scope: Construct, id: string, props: BlogSiteResourcesProps) {
    super(scope, id);
    const { name, namespace } = props.site.metadata;
    const { spec } = props.site;
    const metadata = { name, namespace, ownerReferences: props.owner ? [props.owner] : undefined };

    const posts = new kplus.ConfigMap(this, 'posts', { metadata, data: spec.posts });
    const web = new kplus.Deployment(this, 'web', {
      metadata,
      replicas: spec.replicas,
      containers: [
        {
          name: 'nginx',
          image: spec.image,
          portNumber: 8080,
          // cdk8s-plus's defaults are non-root, a read-only root and no privilege escalation;
          // restrictPodSecurity (below) adds the rest. The unprivileged image runs as uid 101.
          securityContext: { user: 101, group: 101 },
          resources: { memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) } },
          readiness: kplus.Probe.fromHttpGet('/', { port: 8080 }),
          volumeMounts: [
            { path: '/usr/share/nginx/html', volume: kplus.Volume.fromConfigMap(this, 'posts-volume', posts) },
            { path: '/tmp', volume: kplus.Volume.fromEmptyDir(this, 'tmp', 'tmp') },
          ],
        },
      ],
    });
    for (const [key, value] of Object.entries(spec.podLabels ?? {})) web.podMetadata.addLabel(key, value);
    // The restricted Pod Security level, which cdk8s-plus 27 cannot fully express by itself.
    restrictPodSecurity(web);
    new kplus.Service(this, 'service', {
      metadata,
      selector: web,
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    });
    new kplus.NetworkPolicy(this, 'ingress', {
      metadata,
      selector: web,
      ingress: { rules: [{ peer: kplus.Pods.all(this, 'all-pods'), ports: [kplus.NetworkPolicyPort.tcp(8080)] }] },
    });
  }
}

/** The whole controller: no reconcile code. */
export const blogSiteController = constructController({
  kind: blogSiteKind,
  // One constant id, as the README writes it: the kit gives every resource its own address.
  render: (scope, site, { owner }) => new BlogSiteResources(scope, 'site', { site, owner }),
  examples: [
    { posts: { 'index.html': '<h1>Hello</h1>' }, replicas: 1, image: 'nginxinc/nginx-unprivileged:1.27-alpine' },
  ],
});
