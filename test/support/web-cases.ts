/** Invalid Application and WebApp specs, with the field each rejection must name. */
export const invalidApplicationSpecs: [what: string, spec: unknown, field: string][] = [
  ['no image', { port: 8080 }, 'spec.image'],
  ['an image with spaces', { image: 'nginx alpine' }, 'spec.image'],
  ['negative replicas', { image: 'nginx', replicas: -1 }, 'spec.replicas'],
  ['port 0', { image: 'nginx', port: 0 }, 'spec.port'],
  ['port 70000', { image: 'nginx', port: 70000 }, 'spec.port'],
  ['an unknown Service type', { image: 'nginx', service: { type: 'ExternalName' } }, 'spec.service.type'],
  ['an Ingress without host', { image: 'nginx', ingress: { className: 'nginx' } }, 'spec.ingress.host'],
  [
    'an Ingress host with a scheme',
    { image: 'nginx', ingress: { host: 'http://example.foo.com' } },
    'spec.ingress.host',
  ],
  [
    'an Ingress path without a slash',
    { image: 'nginx', ingress: { host: 'example.foo.com', path: 'api' } },
    'spec.ingress.path',
  ],
  [
    'an Ingress host with a label of 64 characters',
    { image: 'nginx', ingress: { host: `${'a'.repeat(64)}.example.com` } },
    'spec.ingress.host',
  ],
  [
    'an Ingress path with //',
    { image: 'nginx', ingress: { host: 'example.foo.com', path: '/a//b' } },
    'spec.ingress.path',
  ],
  [
    'an Ingress path ending in /..',
    { image: 'nginx', ingress: { host: 'example.foo.com', path: '/..' } },
    'spec.ingress.path',
  ],
  [
    'an Ingress path with /./',
    { image: 'nginx', ingress: { host: 'example.foo.com', path: '/a/./b' } },
    'spec.ingress.path',
  ],
  [
    'an IngressClass name not a DNS name',
    { image: 'nginx', ingress: { host: 'example.foo.com', className: 'Bad_Class' } },
    'spec.ingress.className',
  ],
  ['an image with an upper-case repository', { image: 'UPPER/Case:tag' }, 'spec.image'],
];

export const invalidWebAppSpecs: [what: string, spec: unknown, field: string][] = [
  ['no image', { replicas: 1 }, 'spec.image'],
  ['replicas as a string', { image: 'nginx', replicas: 'three' }, 'spec.replicas'],
  ['replicas 101', { image: 'nginx', replicas: 101 }, 'spec.replicas'],
  ['port 0', { image: 'nginx', port: 0 }, 'spec.port'],
  ['an upper-case domain', { image: 'nginx', domain: 'Example.COM' }, 'spec.domain'],
  ['a domain with a path', { image: 'nginx', domain: 'example.com/app' }, 'spec.domain'],
  ['an unknown field', { image: 'nginx', host: 'example.com' }, 'spec.host'],
  [
    'a domain with a label of 64 characters',
    { image: 'nginx', domain: `${'a'.repeat(64)}.example.com` },
    'spec.domain',
  ],
  ['an image with a malformed digest', { image: 'nginx@sha256:abc' }, 'spec.image'],
];

/** An Application serving behind an Ingress with TLS (no seed has one): what the reconciler tests make. */
export const servedApplication = {
  apiVersion: 'app.aiops.org/v1',
  kind: 'Application',
  metadata: { name: 'app' },
  spec: { image: 'nginx:1.27', ingress: { host: 'app.example.com', className: 'nginx', tlsSecretName: 'app-tls' } },
};
