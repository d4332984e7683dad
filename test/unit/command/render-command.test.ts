import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applicationController } from '../../../constructs/webapp/controller';
import { renderChildren } from '../../../operator/runtime/children/render';
import {
  kitControllers,
  loadControllers,
  OFFLINE_UID,
  readResources,
  RenderError,
  renderResources,
} from '../../../command/render';
import { commandArgs } from '../../support/command';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SEEDS = path.join(ROOT, 'test', 'fixtures', 'seeds');
const docs = (yaml: string) =>
  parseAllDocuments(yaml)
    .map((d) => d.toJSON())
    .filter(Boolean);

function file(yaml: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-render-'));
  const f = path.join(dir, 'resource.yaml');
  fs.writeFileSync(f, yaml);
  return f;
}

describe('render: the children a resource becomes, offline', () => {
  test("a seed's Database: every child, owned by it, from the CRD's defaults as the API server would store it", () => {
    const children = docs(renderResources([path.join(SEEDS, '001-my-db.yaml')], kitControllers));
    expect(children.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual([
      'ConfigMap/my-db-retention',
      'Service/my-db-headless',
      'Service/my-db',
      'Service/my-db-rw',
      'Service/my-db-ro',
      'ConfigMap/my-db-config',
      // In cdk8s's dependency order: the CronJob waits for the StatefulSet, listed after the claim.
      'PersistentVolumeClaim/my-db-backup',
      // Once: the dumps the claim holds (kept from a Database of this name before) into the status.
      'Job/my-db-list-backups',
      'StatefulSet/my-db',
      'CronJob/my-db-backup',
    ]);
    const sts = children.find((c) => c.kind === 'StatefulSet');
    expect(sts.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Database', name: 'my-db', uid: OFFLINE_UID, controller: true }),
    ]);
    // deletionPolicy is not in the seed: its default (Retain) decided the claims' fate.
    expect(sts.spec.persistentVolumeClaimRetentionPolicy.whenDeleted).toBe('Retain');
  });

  test('the same objects the reconciler renders for the stored resource', () => {
    const stored = {
      apiVersion: 'app.aiops.org/v1',
      kind: 'Application',
      metadata: { name: 'shop', namespace: 'team-a', uid: OFFLINE_UID, generation: 1 },
      // What the API server stores for the spec below: its defaults filled in.
      spec: { image: 'nginx:1.27', replicas: 1, port: 8080, service: { type: 'ClusterIP' } },
    };
    const offline = docs(
      renderResources(
        [
          file(
            'apiVersion: app.aiops.org/v1\nkind: Application\nmetadata: {name: shop, namespace: team-a}\nspec: {image: "nginx:1.27", port: 8080}\n',
          ),
        ],
        kitControllers,
      ),
    );
    expect(offline).toEqual(renderChildren(applicationController, stored as never));
  });

  test('what the CRD would refuse, a kind no controller reconciles, a version not served: one clear error', () => {
    const bad = file('apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata: {name: mc}\nspec: {size: 99}\n');
    expect(() => renderResources([bad], kitControllers)).toThrow(RenderError);
    expect(() => renderResources([bad], kitControllers)).toThrow(
      'Memcached mc: the CRD would refuse it: spec.size: Invalid value: 99',
    );
    const other = file('apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {}\n');
    expect(() => renderResources([other], kitControllers)).toThrow(
      /no controller reconciles example.com\/v1 Widget; known: cache.example.com Memcached/,
    );
    const old = file('apiVersion: cache.example.com/v9\nkind: Memcached\nmetadata: {name: mc}\nspec: {size: 1}\n');
    expect(() => renderResources([old], kitControllers)).toThrow('cache.example.com/v9 is not a served version');
    // A document that is not an object (a stray line of text) is not read as one.
    const stray = file(
      'apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata: {name: mc}\nspec: {size: 1}\n---\njust text\n',
    );
    expect(() => renderResources([stray], kitControllers)).toThrow(
      `${stray}: document 2 is not a Kubernetes object (apiVersion, kind, metadata)`,
    );
  });

  test("a user's own controllers, from the TypeScript module that exports them", async () => {
    const controllers = await loadControllers(path.join(ROOT, 'examples', 'static-site', 'static-site.ts'));
    expect(controllers.map((c) => c.name)).toEqual(['staticsite']);
    const site = file(
      "apiVersion: sites.example.com/v1alpha1\nkind: StaticSite\nmetadata: {name: hello}\nspec: {pages: {index.html: '<h1>hi</h1>'}, host: hello.example.com}\n",
    );
    const children = docs(renderResources([site], controllers));
    expect(children.map((c) => c.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Ingress', 'Service']);
  }, 60_000);

  test('the command: files are required (usage, exit 2); a refusal is one line and exit 1', () => {
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [...commandArgs(), ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const none = cli('render');
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('render: give one or more resource files');
    const refused = cli(
      'render',
      file('apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata: {name: mc}\nspec: {}\n'),
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('spec.size: Required value');
    expect(refused.stderr).not.toContain('    at ');
  }, 60_000);
});

describe('render --status: the status the kind would show', () => {
  const mc = file(
    'apiVersion: cache.example.com/v1\nkind: Memcached\nmetadata: {name: mc, namespace: ns}\nspec: {size: 2}\n',
  );
  const statusOf = (text: string) => docs(text).find((d) => d.status !== undefined)?.status;

  test('from the children as rendered: nothing ready yet, scaling up', () => {
    const status = statusOf(renderResources([mc], kitControllers, { status: true }));
    expect(status.readyReplicas).toBe(0);
    expect(status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Available', status: 'False' })]),
    );
  });

  test('from observed objects: the Deployment ready and its pods listed', () => {
    const [deployment] = docs(renderResources([mc], kitControllers));
    const labels = deployment.spec.template.metadata.labels;
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'ns', labels },
      status: { phase: 'Running' },
    });
    const observed = [
      {
        ...deployment,
        status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1 },
      },
      pod('mc-a'),
      pod('mc-b'),
    ];
    const status = statusOf(renderResources([mc], kitControllers, { status: true, observed }));
    expect(status.readyReplicas).toBe(2);
    expect(status.nodes).toEqual(['mc-a', 'mc-b']);
  });

  test('observed objects from a List (kubectl get -o yaml) are read item by item', () => {
    const [deployment] = docs(renderResources([mc], kitControllers));
    const ready = {
      ...deployment,
      status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1 },
    };
    const list = file(
      JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [ready] }),
    );
    const status = statusOf(renderResources([mc], kitControllers, { status: true, observed: readResources(list) }));
    expect(status.readyReplicas).toBe(2);
  });

  test("the six conditions the reconciler writes, computed, none copied from the resource's own status", () => {
    const stale = file(
      [
        'apiVersion: cache.example.com/v1',
        'kind: Memcached',
        'metadata: {name: mc, namespace: ns, generation: 4}',
        'spec: {size: 2}',
        'status:',
        '  conditions:',
        '  - {type: Ready, status: "True", reason: Ready, message: old, lastTransitionTime: "2026-01-01T00:00:00Z"}',
        '  - {type: Reconciling, status: "False", reason: Done, message: old, lastTransitionTime: "2026-01-01T00:00:00Z"}',
        '',
      ].join('\n'),
    );
    const status = statusOf(renderResources([stale], kitControllers, { status: true }));
    const types = status.conditions.map((c: any) => c.type).sort();
    expect(types).toEqual(['Available', 'Degraded', 'Progressing', 'Ready', 'Reconciling', 'Stalled']);
    const condition = (type: string) => status.conditions.find((c: any) => c.type === type);
    // Nothing ready yet: not Ready, whatever the stale status said.
    expect(condition('Available')).toMatchObject({ status: 'False' });
    expect(condition('Ready')).toMatchObject({ status: 'False' });
    expect(condition('Reconciling')).toMatchObject({ status: 'True' });
    expect(status.conditions.every((c: any) => c.message !== 'old')).toBe(true);
  });

  test('a Database whose StatefulSet is ready but whose claim is smaller than asked: Progressing Resizing, not Ready', () => {
    const db = file(
      'apiVersion: database.example.com/v1alpha1\nkind: Database\nmetadata: {name: orders, namespace: ns, generation: 2}\nspec: {type: postgresql, version: "13", storage: {size: 5Gi}}\n',
    );
    const sts = docs(renderResources([db], kitControllers)).find((d) => d.kind === 'StatefulSet');
    const ready = {
      ...sts,
      metadata: { ...sts.metadata, generation: 1 },
      status: { observedGeneration: 1, replicas: 1, readyReplicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    };
    const template = sts.spec.volumeClaimTemplates[0].metadata.name;
    const claim = (has: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `${template}-orders-0`, namespace: 'ns' },
      spec: { resources: { requests: { storage: '5Gi' } } },
      status: { phase: 'Bound', capacity: { storage: has } },
    });
    const condition = (observed: any[], type: string) =>
      statusOf(renderResources([db], kitControllers, { status: true, observed })).conditions.find(
        (c: any) => c.type === type,
      );
    expect(condition([ready, claim('2Gi')], 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Resizing',
      message: `StatefulSet: claim ${template}-orders-0 has 2Gi of the 5Gi asked: its volume is being expanded`,
    });
    expect(condition([ready, claim('2Gi')], 'Ready')).toMatchObject({ status: 'False' });
    expect(condition([ready, claim('5Gi')], 'Progressing')).toMatchObject({ status: 'False', reason: 'Complete' });
  });
});
