/**
 * A kind written with cdk8s-plus L2 constructs (examples/blog-site), the way cdk8s teams write
 * charts: installed with kubectl, reconciled by its own entry point, and judged by the commands a
 * user runs before a rollout. Two resources in one namespace must serve only their own pods.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IMAGE_PULL_FAILURE_LABEL } from '../../testing';
import { blogSiteApp } from '../../examples/blog-site/app';
import { controllersModule, runCommand } from '../support/controllers-module';
import { startExampleOperator, startExampleReconciler } from '../support/example-operator';
import { helm, helmBinary } from '../support/helm';
import {
  autoscalerConditions,
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  kubectlOk,
  nodesRun,
  testIf,
  testKubeconfig,
} from '../support/kube';
import { kstatusOf as kstatusOfObject } from '../support/kstatus';
import type { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const MODULE = path.join(ROOT, 'examples', 'blog-site', 'blog-site.ts');

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
const get = (kind: string, name: string) => getJsonIfExists(['get', kind, name, '-n', ns]);

function blogSite(name: string, replicas: number, podLabels?: Record<string, string>) {
  return {
    apiVersion: 'blogs.example.com/v1alpha1',
    kind: 'BlogSite',
    metadata: { name },
    spec: { posts: { 'index.html': `<h1>${name}</h1>` }, replicas, ...(podLabels ? { podLabels } : {}) },
  };
}

function applySite(name: string, replicas: number, podLabels?: Record<string, string>, namespace = ns): void {
  kubectlOk(['apply', '-n', namespace, '-f', '-'], { input: JSON.stringify(blogSite(name, replicas, podLabels)) });
}

/** What kstatus (Helm 4's --wait, Flux, kpt) makes of a BlogSite as the API server has it now. */
const kstatusOf = (name: string, namespace = ns) => kstatusOfObject('blogsite', name, namespace);

/** A chart holding one BlogSite, as a team ships its sites. */
function chartWith(site: object): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-chart-'));
  fs.writeFileSync(path.join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: blog\nversion: 0.1.0\n');
  fs.mkdirSync(path.join(dir, 'templates'));
  fs.writeFileSync(path.join(dir, 'templates', 'site.yaml'), JSON.stringify(site));
  return dir;
}

/** The pods an EndpointSlice of the Service lists, by name. */
function endpointPods(service: string): string[] {
  const slices = getJson(['get', 'endpointslices', '-n', ns, '-l', `kubernetes.io/service-name=${service}`]).items;
  return slices
    .flatMap((s: any) => s.endpoints ?? [])
    .map((e: any) => e.targetRef?.name as string)
    .sort();
}

/** The pods a Deployment made, by name (through its ReplicaSet). */
function podsOf(deployment: string): string[] {
  return getJson(['get', 'pods', '-n', ns])
    .items.filter((p: any) => p.metadata.ownerReferences?.some((o: any) => o.name.startsWith(`${deployment}-`)))
    .map((p: any) => p.metadata.name as string)
    .sort();
}

beforeAll(async () => {
  ({ ns, reconciler } = await startExampleOperator({
    example: 'blog-site',
    app: blogSiteApp,
    crd: 'blogsites.blogs.example.com',
    controller: 'blogsite',
  }));
  // The restricted Pod Security level, enforced: the pods cdk8s-plus makes must meet it.
  kubectlOk(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted']);
  applySite('alpha', 2);
  applySite('beta', 1);
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('a cdk8s-plus kind on the real API server', () => {
  test('each BlogSite gets its own ConfigMap, Deployment, Service and NetworkPolicy, whose selectors are its own', async () => {
    for (const name of ['alpha', 'beta']) {
      for (const kind of ['configmap', 'deployment', 'service', 'networkpolicy']) {
        await eventually(`${kind} ${name}`, () => get(kind, name));
      }
    }
    const selector = (name: string) => get('service', name).spec.selector;
    expect(selector('alpha')).not.toEqual(selector('beta'));
    expect(get('networkpolicy', 'alpha').spec.podSelector.matchLabels).toEqual(selector('alpha'));
    expect(get('deployment', 'alpha').spec.template.metadata.labels).toMatchObject(selector('alpha'));
  });

  testIf(nodesRun, 'needs nodes that run pods')(
    "two BlogSites in one namespace: each Service's EndpointSlices hold only its own pods",
    async () => {
      for (const [name, replicas] of [
        ['alpha', 2],
        ['beta', 1],
      ] as const) {
        const pods = await eventually(`${name}'s ${replicas} pods behind its Service`, () => {
          const own = podsOf(name);
          const listed = endpointPods(name);
          return own.length === replicas && listed.length === replicas ? { own, listed } : undefined;
        });
        expect(pods.listed).toEqual(pods.own);
      }
      expect(endpointPods('alpha').some((p) => p.startsWith('beta-'))).toBe(false);
      expect(endpointPods('beta').some((p) => p.startsWith('alpha-'))).toBe(false);
    },
  );

  test('render, diff and plan load the kind from its module and agree with what the reconciler applied', async () => {
    await eventually('alpha reconciled', () =>
      get('blogsite', 'alpha')?.status?.observedGeneration ? true : undefined,
    );
    const rendered = runCommand(['render', '--controllers', MODULE, 'blogsite/alpha', '-n', ns]);
    expect({ code: rendered.status, stderr: rendered.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rendered.stdout).toContain(get('service', 'alpha').spec.selector['cdk8s.io/metadata.addr']);
    const diff = runCommand(['diff', '--controllers', MODULE, 'blogsite/alpha', '-n', ns]);
    expect({ code: diff.status, stderr: diff.stderr }).toEqual({ code: 0, stderr: '' });
    const plan = runCommand(['plan', '--kind', 'BlogSite', '-n', ns, '-o', 'json', '--controllers', MODULE]);
    expect({ code: plan.status, stderr: plan.stderr }).toEqual({ code: 0, stderr: '' });
    const children = (JSON.parse(plan.stdout) as { children: Record<string, number> }).children;
    expect(children).toMatchObject({ created: 0, pruned: 0, refused: 0, changed: 0 });
  });

  test('plan and diff agree on a new version that adds one label: that label on every child, no field the API server defaults', async () => {
    await eventually('alpha reconciled', () =>
      get('blogsite', 'alpha')?.status?.observedGeneration ? true : undefined,
    );
    const labelled = controllersModule(`import { ApiObject } from 'cdk8s';
import { blogSiteController } from ${JSON.stringify(MODULE.replace(/\.ts$/, ''))};
export const controllers = [{
  ...blogSiteController,
  render: (scope: any, site: any, context: any) => {
    blogSiteController.render!(scope, site, context);
    for (const o of scope.node.findAll()) if (o instanceof ApiObject) o.metadata.addLabel('team', 'a');
  },
}];
`);
    const plan = runCommand(['plan', '--kind', 'BlogSite', '-n', ns, '-o', 'json', '--controllers', labelled]);
    expect(plan.stderr).toBe('');
    const fields = (JSON.parse(plan.stdout) as { fieldChanges: { field: string }[] }).fieldChanges.map((f) => f.field);
    expect([...new Set(fields)]).toEqual(['metadata.labels.team']);
    const diff = runCommand(['diff', '--controllers', labelled, 'blogsite/alpha', '-n', ns]);
    const added = diff.stdout.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    // The label, under a `labels:` of its own where a child had none: nothing else.
    expect([...new Set(added.map((l) => l.slice(1).trim()))].sort()).toEqual(expect.arrayContaining(['team: a']));
    expect(added.map((l) => l.slice(1).trim()).filter((l) => l !== 'team: a' && l !== 'labels:')).toEqual([]);
  });

  testIf(nodesRun, 'needs nodes that run pods')(
    'kstatus: a healthy BlogSite is Current and Ready (kubectl wait), one whose image cannot be pulled is Failed, one never reconciled is InProgress',
    async () => {
      kubectlOk(['wait', '--for=condition=Ready', 'blogsite/alpha', '-n', ns, '--timeout=90s']);
      expect(kstatusOf('alpha')).toBe('Current');
      applySite('unpullable', 1, { [IMAGE_PULL_FAILURE_LABEL]: 'true' });
      const stalled = await eventually(
        'Stalled',
        () => {
          const c = get('blogsite', 'unpullable')?.status?.conditions?.find((x: any) => x.type === 'Stalled');
          return c?.status === 'True' ? c : undefined;
        },
        90_000,
      );
      expect(stalled.reason).toBe('PodFailing');
      expect(kstatusOf('unpullable')).toBe('Failed');
      // A namespace the operator does not watch: created, never reconciled.
      const unwatched = createTestNamespace('blog-unwatched');
      applySite('orphan', 1, undefined, unwatched);
      expect(kstatusOf('orphan', unwatched)).toBe('InProgress');
      kubectlOk(['delete', 'namespace', unwatched, '--wait=false']);
    },
  );

  testIf(nodesRun && !helmBinary().missing, `needs nodes that run pods and helm (${helmBinary().missing ?? 'built'})`)(
    'helm upgrade --install --wait (Helm 4, kstatus): fails on a BlogSite whose image cannot be pulled, succeeds on a healthy one only once it is Ready',
    async () => {
      const kubeconfig = testKubeconfig();
      const broken = chartWith(blogSite('broken', 1, { [IMAGE_PULL_FAILURE_LABEL]: 'true' }));
      const failed = helm(['upgrade', '--install', 'broken', broken, '-n', ns, '--wait', '--timeout', '30s'], {
        kubeconfig,
      });
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toMatch(/broken/);
      const healthy = chartWith(blogSite('healthy', 2));
      const ok = helm(['upgrade', '--install', 'healthy', healthy, '-n', ns, '--wait', '--timeout', '120s'], {
        kubeconfig,
      });
      expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: '' });
      // Helm returned only once the resource was ready: Ready is already True, both pods listed.
      const ready = get('blogsite', 'healthy').status.conditions.find((c: any) => c.type === 'Ready');
      expect(ready).toMatchObject({ status: 'True' });
      expect(endpointPods('healthy')).toHaveLength(2);
      helm(['uninstall', 'broken', '-n', ns], { kubeconfig });
      helm(['uninstall', 'healthy', '-n', ns], { kubeconfig });
    },
  );

  test('kubectl scale on the user kind: spec.replicas moves, the Deployment follows; the scale subresource reports pods and selector', async () => {
    kubectlOk(['scale', 'blogsite', 'beta', '-n', ns, '--replicas=3']);
    expect(get('blogsite', 'beta').spec.replicas).toBe(3);
    await eventually('the Deployment at 3', () => (get('deployment', 'beta')?.spec.replicas === 3 ? true : undefined));
    const scale = await eventually('the scale status', () => {
      const s = JSON.parse(
        kubectlOk(['get', '--raw', `/apis/blogs.example.com/v1alpha1/namespaces/${ns}/blogsites/beta/scale`]),
      );
      return s.status?.selector && s.status.replicas === 3 ? s : undefined;
    });
    expect(scale.spec.replicas).toBe(3);
    // The selector is the one the Service selects the pods by, as kubectl get pods -l takes it.
    const selector = Object.entries(get('service', 'beta').spec.selector as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    expect(scale.status.selector).toBe(selector);
  });

  test('a HorizontalPodAutoscaler targets a BlogSite: it reads the scale, selector included', async () => {
    const conditions = await autoscalerConditions(
      ns,
      { apiVersion: 'blogs.example.com/v1alpha1', kind: 'BlogSite', name: 'beta' },
      { min: 1, max: 5 },
    );
    expect(conditions.find((c: any) => c.type === 'AbleToScale')).toMatchObject({
      status: 'True',
      reason: 'SucceededGetScale',
    });
    expect(conditions.find((c: any) => c.type === 'ScalingActive').reason).not.toBe('InvalidSelector');
    kubectlOk(['delete', 'hpa', 'beta', '-n', ns]);
  });

  test('a refused immutable change (a Deployment whose selector is not the one rendered): not Available, not Ready, naming the field; deleted, it is made again at once', async () => {
    applySite('gamma', 1);
    const site = await eventually('gamma reconciled', () => {
      const g = get('blogsite', 'gamma');
      return g?.status?.conditions?.some((c: any) => c.type === 'Ready') ? g : undefined;
    });
    const rendered = get('deployment', 'gamma');
    // The Deployment as an older render left it: ours (controlled by gamma), another selector.
    // Swapped while the reconciler is stopped, or it would make its own again first.
    expect((await reconciler.stop()).code).toBe(0);
    kubectlOk(['delete', 'deployment', 'gamma', '-n', ns, '--wait=true']);
    const old = { 'cdk8s.io/metadata.addr': 'render-site-web-c83183c6' };
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'gamma',
          ownerReferences: [
            { apiVersion: site.apiVersion, kind: 'BlogSite', name: 'gamma', uid: site.metadata.uid, controller: true },
          ],
        },
        spec: {
          ...rendered.spec,
          selector: { matchLabels: old },
          template: { ...rendered.spec.template, metadata: { labels: old } },
        },
      }),
    });
    reconciler = await startExampleReconciler({ example: 'blog-site', controller: 'blogsite', ns });
    const condition = (type: string) => get('blogsite', 'gamma')?.status?.conditions?.find((c: any) => c.type === type);
    const available = await eventually('Available=False ChildRefused', () =>
      condition('Available')?.reason === 'ChildRefused' ? condition('Available') : undefined,
    );
    expect(available.status).toBe('False');
    expect(available.message).toMatch(/spec\.selector.*field is immutable/);
    expect(condition('Ready')).toMatchObject({ status: 'False' });
    expect(condition('Stalled')).toMatchObject({ status: 'True' });
    expect(condition('Degraded')?.message).toContain(`kubectl delete deployment gamma -n ${ns}`);
    expect(kstatusOf('gamma')).toBe('Failed');
    // diff shows the refusal among the other children, with the way through, and does not abort.
    const diff = runCommand(['diff', '--controllers', MODULE, 'blogsite/gamma', '-n', ns]);
    expect({ code: diff.status, stderr: diff.stderr }).toEqual({ code: 1, stderr: '' });
    expect(diff.stdout).toMatch(new RegExp(`^refused +Deployment ${ns}/gamma$`, 'm'));
    expect(diff.stdout).toContain(`kubectl delete deployment gamma -n ${ns}`);
    expect(diff.stdout).toMatch(new RegExp(`^unchanged +Service ${ns}/gamma$`, 'm'));
    // A change of the posts and the image: the ConfigMap and the refused Deployment together, so
    // neither is written (no new posts beside the old pods), and the status says what blocks it.
    const posts = get('configmap', 'gamma').data;
    const before = get('blogsite', 'gamma');
    kubectlOk([
      'patch',
      'blogsite',
      'gamma',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: { posts: { 'index.html': '<h1>new</h1>' }, image: 'nginxinc/nginx-unprivileged:1.28-alpine' },
      }),
    ]);
    await eventually('the new generation reconciled', () =>
      get('blogsite', 'gamma')?.status?.observedGeneration > before.metadata.generation ? true : undefined,
    );
    expect(get('configmap', 'gamma').data).toEqual(posts);
    expect(condition('Available')?.message).toMatch(/spec\.selector.*field is immutable/);
    // The children that can be applied still are: a deleted ConfigMap comes back.
    kubectlOk(['delete', 'configmap', 'gamma', '-n', ns]);
    await eventually('the ConfigMap again', () => get('configmap', 'gamma'));
    // The way through: delete the Deployment; it is made again at once with the rendered selector.
    kubectlOk(['delete', 'deployment', 'gamma', '-n', ns]);
    const again = await eventually('the Deployment again', () => {
      const d = get('deployment', 'gamma');
      return d?.spec.selector.matchLabels['cdk8s.io/metadata.addr'] !== old['cdk8s.io/metadata.addr'] ? d : undefined;
    });
    expect(again.spec.selector).toEqual(rendered.spec.selector);
    if (nodesRun) kubectlOk(['wait', '--for=condition=Ready', 'blogsite/gamma', '-n', ns, '--timeout=90s']);
  });
});
