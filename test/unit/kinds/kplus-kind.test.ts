/**
 * A kind written with cdk8s-plus L2 constructs (examples/blog-site): its automatic selectors are
 * the resource's own, and the commands that load a user's controllers module render it with the
 * same cdk8s the kit uses.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadControllers, renderResources } from '../../../command/render';
import type { KubeObject } from '../../../constructs/contract';
import { blogSiteController } from '../../../examples/blog-site/blog-site';
import { renderChildren } from '../../../operator/runtime/children/render';

const ROOT = path.resolve(__dirname, '..', '..', '..');

function blogSite(name: string, namespace = 'blogs') {
  return {
    apiVersion: 'blogs.example.com/v1alpha1',
    kind: 'BlogSite',
    metadata: { name, namespace, uid: `uid-${name}`, generation: 1 },
    spec: { posts: { 'index.html': `<h1>${name}</h1>` }, replicas: 1, image: 'nginx' },
  };
}

const rendered = (name: string, namespace?: string) =>
  renderChildren(blogSiteController, blogSite(name, namespace)) as (KubeObject & { spec?: any })[];
const ofKind = (objects: (KubeObject & { spec?: any })[], kind: string) => {
  const found = objects.find((o) => o.kind === kind);
  if (!found) throw new Error(`no ${kind} rendered`);
  return found;
};
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('a cdk8s-plus kind: every resource its own selectors', () => {
  test("two resources in one namespace: each Service and NetworkPolicy selects its own pods, never the other's", () => {
    const alpha = rendered('alpha');
    const beta = rendered('beta');
    const podLabels = (objects: typeof alpha) => ofKind(objects, 'Deployment').spec.template.metadata.labels;
    for (const [own, other] of [
      [alpha, beta],
      [beta, alpha],
    ] as const) {
      const service = ofKind(own, 'Service').spec.selector;
      const policy = ofKind(own, 'NetworkPolicy').spec.podSelector.matchLabels;
      const deployment = ofKind(own, 'Deployment').spec.selector.matchLabels;
      expect(Object.keys(service).length).toBeGreaterThan(0);
      expect(matches(service, podLabels(own))).toBe(true);
      expect(matches(policy, podLabels(own))).toBe(true);
      expect(matches(deployment, podLabels(own))).toBe(true);
      expect(matches(service, podLabels(other))).toBe(false);
      expect(matches(policy, podLabels(other))).toBe(false);
      expect(matches(deployment, podLabels(other))).toBe(false);
    }
  });

  test('the same name in two namespaces gets two addresses; the same resource the same one at every render', () => {
    const selector = (objects: ReturnType<typeof rendered>) => ofKind(objects, 'Service').spec.selector;
    expect(selector(rendered('alpha', 'team-a'))).not.toEqual(selector(rendered('alpha', 'team-b')));
    expect(rendered('alpha', 'team-a')).toEqual(rendered('alpha', 'team-a'));
  });
});

describe('render with a kplus kind from a user module: one copy of cdk8s', () => {
  test('loadControllers of a module written with cdk8s-plus renders its Lazy values', async () => {
    const controllers = await loadControllers(path.join(ROOT, 'examples', 'blog-site', 'blog-site.ts'));
    expect(controllers.map((c) => c.name)).toEqual(['blogsite']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-kplus-'));
    const file = path.join(dir, 'site.yaml');
    fs.writeFileSync(
      file,
      "apiVersion: blogs.example.com/v1alpha1\nkind: BlogSite\nmetadata: {name: alpha, namespace: blogs}\nspec: {posts: {index.html: '<h1>a</h1>'}}\n",
    );
    const children = parseAllDocuments(renderResources([file], controllers))
      .map((d) => d.toJSON() as KubeObject & { spec?: any })
      .filter(Boolean);
    expect(children.map((c) => c.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'NetworkPolicy', 'Service']);
    // The ConfigMap's data is a Lazy in cdk8s-plus: rendered, not refused.
    expect(children.find((c) => c.kind === 'ConfigMap')).toMatchObject({ data: { 'index.html': '<h1>a</h1>' } });
    // Offline, the render is the reconciler's, address included.
    const deployment = ofKind(children, 'Deployment');
    expect(deployment.spec.selector).toEqual(ofKind(rendered('alpha'), 'Deployment').spec.selector);
  }, 60_000);
});
