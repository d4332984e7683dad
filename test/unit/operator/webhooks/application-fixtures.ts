/**
 * An Application (app.aiops.org/v1) and the Ingresses its validate hook reads, for the admission
 * tests: the hook refuses a host another, older Ingress already routes.
 */
import { ChildMap, type KubeObject } from '../../../../constructs';

/** An Application asking for `host`, as a webhook receives it: with the schema's defaults applied. */
export const application = (name: string, host: string, uid?: string) => ({
  apiVersion: 'app.aiops.org/v1',
  kind: 'Application',
  metadata: { name, namespace: 'team-a', uid },
  spec: {
    image: 'nginx',
    replicas: 1,
    port: 8080,
    service: { type: 'ClusterIP' },
    ingress: { host, className: 'nginx', path: '/' },
  },
});

/** An Ingress routing `host` at `/`, made before any Application here. */
export const ingress = (namespace: string, name: string, host: string): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace, name, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { rules: [{ host, http: { paths: [{ path: '/' }] } }] },
});

/** What the webhook server gives a validate hook, over these cached Ingresses. */
export const reading = (ingresses: KubeObject[]) => () => ({
  children: new ChildMap(),
  read: <T extends KubeObject>(t: { kind: string }) => (t.kind === 'Ingress' ? ingresses : []) as T[],
});
