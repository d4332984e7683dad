import { type CustomResource, CustomResourceKind } from '../core/kind';
import {
  DNS_SUBDOMAIN_MAX_LENGTH,
  DNS_SUBDOMAIN_PATTERN,
  IMAGE_REFERENCE_MAX_LENGTH,
  IMAGE_REFERENCE_PATTERN,
  INGRESS_PATH_MAX_LENGTH,
  INGRESS_PATH_PATTERN,
} from '../core/formats';
import { conditionsSchema, type Static, t } from '../core/schema';

const DNS_NAME = { pattern: DNS_SUBDOMAIN_PATTERN, maxLength: DNS_SUBDOMAIN_MAX_LENGTH } as const;
const IMAGE = {
  required: true,
  minLength: 1,
  maxLength: IMAGE_REFERENCE_MAX_LENGTH,
  pattern: IMAGE_REFERENCE_PATTERN,
  description: 'Container image to run: [registry/]repository[:tag][@sha256:digest], the repository lower-case.',
} as const;

/** The status both web kinds report. */
export const webStatusSchema = t.object(
  {
    replicas: t.integer({ minimum: 0, description: 'Pods the Deployment has.' }),
    availableReplicas: t.integer({ minimum: 0, description: 'Pods available to serve.' }),
    url: t.string({ description: 'Where the app is reached: the Ingress URL, or the Service address without one.' }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation the status was computed from.',
    }),
    conditions: conditionsSchema(),
  },
  { description: 'The observed state of the app.' },
);

/** `applications.app.aiops.org` (seed 002): a Deployment, a Service and, optionally, an Ingress. */
export const applicationSpecSchema = t.object(
  {
    image: t.string(IMAGE),
    replicas: t.integer({ default: 1, minimum: 0, maximum: 100, description: 'Pods to run.' }),
    port: t.integer({ default: 8080, minimum: 1, maximum: 65535, description: 'Port the container listens on.' }),
    service: t.object(
      {
        type: t.enum(['ClusterIP', 'NodePort', 'LoadBalancer'] as const, {
          default: 'ClusterIP',
          description: 'Service type.',
        }),
        port: t.integer({
          minimum: 1,
          maximum: 65535,
          description: 'Port the Service exposes. Default: the container port.',
        }),
      },
      { default: {}, description: 'The Service in front of the pods.' },
    ),
    ingress: t.object(
      {
        host: t.string({
          required: true,
          ...DNS_NAME,
          description:
            'Host name the Ingress routes, e.g. example.foo.com: lower-case DNS labels of at most 63 characters.',
        }),
        className: t.string({
          minLength: 1,
          ...DNS_NAME,
          description: "IngressClass (a DNS name), e.g. nginx. Default: the cluster's default class.",
        }),
        path: t.string({
          default: '/',
          maxLength: INGRESS_PATH_MAX_LENGTH,
          pattern: INGRESS_PATH_PATTERN,
          description:
            'Path prefix routed to the Service: absolute, with no empty, "." or ".." segment and no percent-encoding.',
        }),
        tlsSecretName: t.string({
          ...DNS_NAME,
          description: 'Secret with the TLS certificate for the host; enables HTTPS.',
        }),
      },
      { description: 'Expose the app through an Ingress. Omit for no Ingress (an existing one is removed).' },
    ),
  },
  { description: 'ApplicationSpec defines the desired state of an Application.' },
);

export type ApplicationSpec = Static<typeof applicationSpecSchema>;
export type WebStatus = Static<typeof webStatusSchema>;
export type Application = CustomResource<typeof applicationSpecSchema, typeof webStatusSchema>;

export const applicationKind = new CustomResourceKind({
  group: 'app.aiops.org',
  kind: 'Application',
  versions: ['v1'],
  // The Service takes the resource's name.
  dns1035Name: true,
  description:
    'Application runs an image as a Deployment behind a Service and, optionally, an Ingress; deleting it deletes them.',
  spec: applicationSpecSchema,
  status: webStatusSchema,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.availableReplicas' },
  printerColumns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
    { name: 'URL', type: 'string', jsonPath: '.status.url' },
  ],
  shortNames: ['app'],
  categories: ['all'],
});

/** `webapps.apps.example.com` (seed 001): replicas, image, port and a domain served by an Ingress. */
export const webAppSpecSchema = t.object(
  {
    replicas: t.integer({ default: 1, minimum: 0, maximum: 100, description: 'Pods to run.' }),
    image: t.string(IMAGE),
    port: t.integer({
      default: 80,
      minimum: 1,
      maximum: 65535,
      description: 'Port the container listens on (and the Service exposes).',
    }),
    domain: t.string({
      ...DNS_NAME,
      description:
        'Domain the Ingress routes to the app: lower-case DNS labels of at most 63 characters. Omit for no Ingress.',
    }),
  },
  { description: 'WebAppSpec defines the desired state of a WebApp.' },
);

export type WebAppSpec = Static<typeof webAppSpecSchema>;
export type WebApp = CustomResource<typeof webAppSpecSchema, typeof webStatusSchema>;

export const webAppKind = new CustomResourceKind({
  group: 'apps.example.com',
  kind: 'WebApp',
  versions: ['v1alpha1'],
  // The Service takes the resource's name.
  dns1035Name: true,
  description: 'WebApp runs an image as a Deployment behind a Service, and an Ingress for its domain.',
  spec: webAppSpecSchema,
  status: webStatusSchema,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.availableReplicas' },
  printerColumns: [
    { name: 'Domain', type: 'string', jsonPath: '.spec.domain' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
  ],
  shortNames: ['wa'],
  categories: ['all'],
});
