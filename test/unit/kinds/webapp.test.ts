import * as fs from 'node:fs';
import * as path from 'node:path';
import { applicationModel, webAppModel } from '../../../constructs';
import { structuralProblems } from '../../../constructs/core/structural';
import {
  applicationController,
  desiredWebStatus,
  ingressHostConflict,
  webAppController,
} from '../../../constructs/webapp/controller';
import { renderChildren } from '../../../operator/runtime/children/render';
import { validateBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { one, parseYaml, podSpecsOf, synthProject } from '../../support/synth';
import { invalidApplicationSpecs, invalidWebAppSpecs } from '../../support/web-cases';

const result = synthProject();
const files = Object.fromEntries(
  Object.entries(result.files).filter(([f]) => /^\d{4}-webapp|samples\/(application|webapp)/.test(f)),
);
const objects = Object.keys(files)
  .filter((f) => !f.includes('/'))
  .sort()
  .flatMap((f) => parseYaml(files[f]));
const appCrd = one(objects, 'CustomResourceDefinition', 'applications.app.aiops.org');
const webCrd = one(objects, 'CustomResourceDefinition', 'webapps.apps.example.com');
const SEED = path.join(__dirname, '..', '..', 'fixtures', 'seeds', '001-my-webapp.yaml');

const application = (spec: object) =>
  ({
    apiVersion: 'app.aiops.org/v1',
    kind: 'Application',
    metadata: { name: 'shop', namespace: 'web', uid: 'u-7', generation: 3 },
    spec: { image: 'nginx:alpine', replicas: 2, port: 8080, service: { type: 'ClusterIP' }, ...spec },
  }) as any;

describe('synthesized web operator (Application and WebApp)', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test("two structural CRDs: seed 002's app.aiops.org/v1 Application and seed 001's apps.example.com/v1alpha1 WebApp", () => {
    expect(appCrd.spec.names).toMatchObject({ kind: 'Application', plural: 'applications' });
    expect(appCrd.spec.versions.map((v: any) => v.name)).toEqual(['v1']);
    expect(webCrd.spec.names).toMatchObject({ kind: 'WebApp', plural: 'webapps' });
    expect(webCrd.spec.versions.map((v: any) => v.name)).toEqual(['v1alpha1']);
    for (const crd of [appCrd, webCrd])
      expect(structuralProblems(crd.spec.versions[0].schema.openAPIV3Schema)).toEqual([]);
  });

  test('one reconciler runs both controllers with one set of grants: children, and deleting Ingresses only', () => {
    const dep = one(objects, 'Deployment', 'webapp-operator');
    expect(dep.spec.template.spec.containers[0].args).toContain('--controllers=application,webapp');
    const role = one(objects, 'ClusterRole', 'webapp-manager-role');
    const grants = role.rules.flatMap((r: any) =>
      r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`),
    );
    expect(grants).toEqual(
      expect.arrayContaining([
        '/services: get,list,watch,create,update,patch',
        'apps/deployments: get,list,watch,create,update,patch',
        'networking.k8s.io/ingresses: get,list,watch,create,update,patch,delete',
      ]),
    );
    expect(grants.filter((g: string) => g.includes('delete'))).toEqual([
      'networking.k8s.io/ingresses: get,list,watch,create,update,patch,delete',
    ]);
    for (const o of objects)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
  });

  test('the samples (seed 002 Application, seed 001 WebApp) validate, and the seed WebApp verbatim', () => {
    const app = parseYaml(files['samples/application-sample.k8s.yaml'])[0]!;
    // Seed 002's Service on 8080, in front of nginx:alpine's port 80.
    expect(app.spec).toMatchObject({
      port: 80,
      service: { port: 8080 },
      ingress: { className: 'nginx', host: 'example.foo.com' },
    });
    expect(new CrdValidator(appCrd).validate(app)).toEqual([]);
    expect(new CrdValidator(webCrd).validate(parseYaml(files['samples/webapp-sample.k8s.yaml'])[0])).toEqual([]);
    expect(new CrdValidator(webCrd).validate(parseYaml(fs.readFileSync(SEED, 'utf8'))[0])).toEqual([]);
  });

  test.each(invalidApplicationSpecs)('rejects an Application with %s, naming the field', (_w, spec, field) => {
    expect(
      new CrdValidator(appCrd)
        .validate({ apiVersion: 'app.aiops.org/v1', kind: 'Application', metadata: { name: 'x' }, spec })
        .join('\n'),
    ).toContain(field);
  });

  test.each(invalidWebAppSpecs)('rejects a WebApp with %s, naming the field', (_w, spec, field) => {
    expect(
      new CrdValidator(webCrd)
        .validate({ apiVersion: 'apps.example.com/v1alpha1', kind: 'WebApp', metadata: { name: 'x' }, spec })
        .join('\n'),
    ).toContain(field);
  });
});

describe('the shared web path', () => {
  test('Application → Deployment, Service, Ingress with TLS, all owned', () => {
    const app = application({
      service: { type: 'NodePort', port: 80 },
      ingress: { host: 'shop.example.com', className: 'nginx', path: '/', tlsSecretName: 'shop-tls' },
    });
    const children = renderChildren(applicationController, app) as any[];
    expect(children.map((c) => c.kind)).toEqual(['Deployment', 'Service', 'Ingress']);
    for (const c of children) {
      expect(c.metadata.ownerReferences[0]).toMatchObject({
        kind: 'Application',
        name: 'shop',
        uid: 'u-7',
        controller: true,
      });
      expect(() => {
        validateBuiltin(c);
      }).not.toThrow();
    }
    const [dep, svc, ing] = children;
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.template.spec.containers[0].ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
    ]);
    expect(svc.spec).toMatchObject({ type: 'NodePort', ports: [{ port: 80, targetPort: 'http' }] });
    expect(ing.spec).toMatchObject({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
    });
    expect(ing.spec.rules[0].http.paths[0]).toMatchObject({
      path: '/',
      pathType: 'Prefix',
      backend: { service: { name: 'shop', port: { name: 'http' } } },
    });
    const { spec } = podSpecsOf([dep])[0]!;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  test('a web server runs restricted as uid 65532 with a read-only root, writing only to emptyDirs where web servers write', () => {
    const [dep] = renderChildren(applicationController, application({ port: 8080 })) as any[];
    const { spec } = podSpecsOf([dep])[0]!;
    const [container] = spec.containers;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    // nginx:alpine's temporary paths (only its own user may write them in the image) and pid file.
    const mounts = container.volumeMounts.map((m: any) => m.mountPath);
    expect(mounts).toEqual(expect.arrayContaining(['/var/cache/nginx', '/run', '/tmp']));
    const emptyDirs = spec.volumes.filter((v: any) => v.emptyDir).map((v: any) => v.name);
    for (const m of container.volumeMounts) expect(emptyDirs).toContain(m.name);
    // Port 8080 needs no sysctl: an unprivileged process may bind it anyway.
    expect(spec.securityContext.sysctls).toBeUndefined();
  });

  test("a port below 1024 (the seed's nginx on 80) is opened to the pod's uid by its own network namespace's sysctl, no capability", () => {
    const [dep] = renderChildren(applicationController, application({ port: 80 })) as any[];
    const { spec } = podSpecsOf([dep])[0]!;
    expect(spec.securityContext.sysctls).toEqual([{ name: 'net.ipv4.ip_unprivileged_port_start', value: '80' }]);
    expect(spec.containers[0].securityContext.capabilities).toEqual({ drop: ['ALL'] });
    expect(spec.hostNetwork).toBeUndefined();
    expect(() => {
      validateBuiltin(dep);
    }).not.toThrow();
  });

  test('no ingress asked: no Ingress; the URL is the Service', () => {
    const app = application({});
    expect(renderChildren(applicationController, app).map((c) => c.kind)).toEqual(['Deployment', 'Service']);
    expect(desiredWebStatus(app, applicationModel(app), {}).url).toBe('http://shop.web.svc:8080');
  });

  test('a WebApp maps onto the same model: its domain becomes the Ingress host', () => {
    const w = {
      apiVersion: 'apps.example.com/v1alpha1',
      kind: 'WebApp',
      metadata: { name: 'site', namespace: 'web', uid: 'u-8', generation: 1 },
      spec: { replicas: 3, image: 'nginx:alpine', port: 80, domain: 'example.com' },
    } as any;
    const m = webAppModel(w);
    expect(m).toMatchObject({
      replicas: 3,
      port: 80,
      service: { type: 'ClusterIP', port: 80 },
      ingress: { host: 'example.com', path: '/' },
    });
    const children = renderChildren(webAppController, w) as any[];
    expect(children.map((c) => `${c.kind}/${c.metadata.labels['app.kubernetes.io/name']}`)).toEqual([
      'Deployment/webapp',
      'Service/webapp',
      'Ingress/webapp',
    ]);
    const s = desiredWebStatus(w, m, {
      deployment: { metadata: { name: 'site' }, status: { replicas: 3, availableReplicas: 3 } },
    });
    expect(s).toMatchObject({ url: 'http://example.com/', availableReplicas: 3 });
    expect(s.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Available=True',
      'Progressing=False',
      'Degraded=False',
    ]);
  });
});

describe('an Ingress host another, older Ingress already routes', () => {
  const model = applicationModel({
    metadata: { name: 'two', namespace: 'b' },
    spec: {
      image: 'nginx',
      replicas: 1,
      port: 80,
      service: { type: 'ClusterIP' },
      ingress: { host: 'shop.example.com', path: '/' },
    },
  } as any);
  const ingress = (ns: string, name: string, created: string, host: string, path = '/', owner?: string) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: ns,
      creationTimestamp: created,
      ...(owner
        ? {
            ownerReferences: [
              { apiVersion: 'app.aiops.org/v1', kind: 'Application', name, uid: owner, controller: true },
            ],
          }
        : {}),
    },
    spec: { rules: [{ host, http: { paths: [{ path }] } }] },
  });
  const ours = ingress('b', 'two', '2026-01-02T00:00:00Z', 'shop.example.com', '/', 'u-two');

  test('an older one in any namespace with the same host and path is a conflict, named', () => {
    const conflict = ingressHostConflict(model, 'u-two', ours, [
      ours,
      ingress('a', 'one', '2026-01-01T00:00:00Z', 'shop.example.com'),
    ]);
    expect(conflict).toContain('Ingress a/one');
    expect(conflict).toContain('shop.example.com');
  });

  test('a younger one, another path or another host is not; nor is our own Ingress', () => {
    expect(
      ingressHostConflict(model, 'u-two', ours, [
        ours,
        ingress('a', 'late', '2026-01-03T00:00:00Z', 'shop.example.com'),
      ]),
    ).toBeUndefined();
    expect(
      ingressHostConflict(model, 'u-two', ours, [
        ingress('a', 'api', '2026-01-01T00:00:00Z', 'shop.example.com', '/api'),
      ]),
    ).toBeUndefined();
    expect(
      ingressHostConflict(model, 'u-two', ours, [ingress('a', 'other', '2026-01-01T00:00:00Z', 'other.example.com')]),
    ).toBeUndefined();
  });

  test('before our Ingress exists, any other claim is older', () => {
    expect(
      ingressHostConflict(model, 'u-two', undefined, [
        ingress('a', 'late', '2026-01-03T00:00:00Z', 'shop.example.com'),
      ]),
    ).toContain('Ingress a/late');
  });

  test('the status says Degraded HostConflict; a failing pod while short of pods or in a rollout says PodFailing', () => {
    const app = {
      apiVersion: 'app.aiops.org/v1',
      kind: 'Application',
      metadata: { name: 'two', namespace: 'b', generation: 1 },
      spec: {},
    } as any;
    const deployment = { metadata: { name: 'two' }, status: { replicas: 1, availableReplicas: 0 } } as any;
    const degraded = (s: any) => s.conditions.find((c: any) => c.type === 'Degraded');
    expect(degraded(desiredWebStatus(app, model, { deployment, hostConflict: 'host taken' }))).toMatchObject({
      status: 'True',
      reason: 'HostConflict',
      message: 'host taken',
    });
    expect(
      degraded(
        desiredWebStatus(app, model, {
          deployment,
          podFailure: { reason: 'PodFailing', message: 'pod x: exited with code 1' },
        }),
      ),
    ).toMatchObject({ status: 'True', reason: 'PodFailing' });
    expect(
      degraded(
        desiredWebStatus(app, model, {
          deployment: { ...deployment, status: { replicas: 1, availableReplicas: 1 } },
          podFailure: { reason: 'PodFailing', message: 'old' },
        }),
      ),
    ).toMatchObject({ status: 'False' });
    // A rollout whose new pod crash-loops while the old one still serves.
    expect(
      degraded(
        desiredWebStatus(app, model, {
          deployment: { ...deployment, status: { replicas: 2, availableReplicas: 1, updatedReplicas: 1 } },
          podFailure: { reason: 'PodFailing', message: 'pod y: container web exited with code 1' },
        }),
      ),
    ).toMatchObject({ status: 'True', reason: 'PodFailing' });
  });
});
