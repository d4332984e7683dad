/**
 * A scale subresource from the replica path alone: the kind's CRD and the status fields the
 * runtime writes for `kubectl scale` and HorizontalPodAutoscalers.
 */
import { App, Chart } from 'cdk8s';
import { CustomResourceDefinition } from '../../../constructs';
import type { KubeObject } from '../../../constructs/contract';
import { scaleStatusOf, serializedSelector } from '../../../constructs/contract/scale';
import { etcdClusterKind } from '../../../constructs/etcd/api';
import { blogSiteKind } from '../../../examples/blog-site/blog-site';

const workload = (kind: string, name: string, replicas: number, matchLabels: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name },
  spec: { selector: { matchLabels } },
  status: { replicas },
});

describe('scale: the runtime writes what the scale subresource reads', () => {
  test("a user kind declaring only its spec's replicas path gets the scale subresource, with a selector, and the status fields", () => {
    const chart = new Chart(new App(), 'c');
    new CustomResourceDefinition(chart, 'crd', { kind: blogSiteKind });
    const crd = chart.toJson()[0];
    const version = crd.spec.versions[0];
    expect(version.subresources.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    });
    expect(version.schema.openAPIV3Schema.properties.status.properties).toMatchObject({
      replicas: { type: 'integer', minimum: 0 },
      selector: { type: 'string' },
    });
    expect(blogSiteKind.scaleStatus).toEqual({ replicas: true, selector: true });
  });

  test("a kit kind keeps its own replica field and gains the runtime's selector (an HPA can target an EtcdCluster)", () => {
    expect(etcdClusterKind.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.readyReplicas',
      labelSelectorPath: '.status.selector',
    });
    expect(etcdClusterKind.scaleStatus).toEqual({ replicas: false, selector: true });
  });

  test('the pods of every workload child, and the first workload’s selector (by kind, then name), serialized', () => {
    const children: KubeObject[] = [
      workload('StatefulSet', 'db', 3, { app: 'db' }),
      workload('Deployment', 'web', 2, { tier: 'web', app: 'blog' }),
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate' }, status: { active: 1 } },
    ];
    expect(scaleStatusOf(children)).toEqual({ replicas: 5, selector: 'app=blog,tier=web' });
    expect(scaleStatusOf([])).toEqual({ replicas: 0 });
  });

  test('a selector with expressions serializes as kubectl writes it; an empty one is none', () => {
    expect(
      serializedSelector({
        matchLabels: { app: 'x' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['web', 'api'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'NotIn', values: ['b'] },
          { key: 'canary', operator: 'Exists' },
        ],
      }),
    ).toBe('app=x,tier in (api,web),!legacy,zone notin (b),canary');
    expect(serializedSelector({})).toBeUndefined();
    expect(serializedSelector(undefined)).toBeUndefined();
  });
});
