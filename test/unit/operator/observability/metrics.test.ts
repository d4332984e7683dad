/** The metrics the kit adds to controller-runtime's: resource conditions, and series that start at 0. */
import { Metrics } from '../../../../operator/runtime/observability/metrics';

interface Cached {
  metadata: { namespace: string; name: string };
  status?: {
    conditions: {
      type: string;
      status: 'True' | 'False';
      reason: string;
      lastTransitionTime: string;
      message: string;
    }[];
  };
}

const condition = (type: string, status: 'True' | 'False', reason: string, lastTransitionTime: string) => ({
  type,
  status,
  reason,
  lastTransitionTime,
  message: '',
});

/** The page's lines of one metric, without HELP and TYPE. */
async function series(metrics: Metrics, name: string): Promise<string[]> {
  const page = await metrics.registry.metrics();
  return page
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .sort();
}

describe('resource conditions', () => {
  test('one series per condition of each cached resource, with its status and reason, read at each scrape', async () => {
    const metrics = new Metrics();
    const cache: Cached[] = [
      {
        metadata: { namespace: 'a', name: 'm1' },
        status: {
          conditions: [
            condition('Available', 'True', 'MinimumReplicasAvailable', '2026-11-25T10:00:00Z'),
            condition('Degraded', 'False', 'AsExpected', '2026-11-25T10:00:05Z'),
          ],
        },
      },
      // Not yet reconciled: no conditions, no series.
      { metadata: { namespace: 'a', name: 'new' } },
    ];
    metrics.watchConditions({ group: 'cache.example.com', kind: 'Memcached' }, () => cache);

    expect(await series(metrics, 'opkit_resource_condition')).toEqual([
      'opkit_resource_condition{kind="Memcached",namespace="a",name="m1",condition="Available",status="True",reason="MinimumReplicasAvailable"} 1',
      'opkit_resource_condition{kind="Memcached",namespace="a",name="m1",condition="Degraded",status="False",reason="AsExpected"} 1',
    ]);
    expect(await series(metrics, 'opkit_resource_condition_last_transition_timestamp_seconds')).toEqual([
      `opkit_resource_condition_last_transition_timestamp_seconds{kind="Memcached",namespace="a",name="m1",condition="Available"} ${Date.parse('2026-11-25T10:00:00Z') / 1000}`,
      `opkit_resource_condition_last_transition_timestamp_seconds{kind="Memcached",namespace="a",name="m1",condition="Degraded"} ${Date.parse('2026-11-25T10:00:05Z') / 1000}`,
    ]);

    // Degraded turns True, and the resource is deleted later: the series follow the cache.
    cache[0]!.status!.conditions[1] = condition('Degraded', 'True', 'ChildNotOwned', '2026-11-25T11:00:00Z');
    expect(await series(metrics, 'opkit_resource_condition')).toContain(
      'opkit_resource_condition{kind="Memcached",namespace="a",name="m1",condition="Degraded",status="True",reason="ChildNotOwned"} 1',
    );
    expect((await series(metrics, 'opkit_resource_condition')).filter((l) => l.includes('Degraded'))).toHaveLength(1);
    cache.splice(0, 1);
    expect(await series(metrics, 'opkit_resource_condition')).toEqual([]);
    expect(await series(metrics, 'opkit_resource_condition_last_transition_timestamp_seconds')).toEqual([]);
  });

  test('a kind watched by two controllers is counted once', async () => {
    const metrics = new Metrics();
    const cache: Cached[] = [
      {
        metadata: { namespace: 'a', name: 'x' },
        status: { conditions: [condition('Ready', 'True', 'Done', '2026-11-25T10:00:00Z')] },
      },
    ];
    metrics.watchConditions({ group: 'g.example.com', kind: 'Thing' }, () => cache);
    metrics.watchConditions({ group: 'g.example.com', kind: 'Thing' }, () => cache);
    expect(await series(metrics, 'opkit_resource_condition')).toHaveLength(1);
  });
});

describe('series that start at 0', () => {
  test("a controller's reconcile and error counters exist before its first reconcile", async () => {
    const metrics = new Metrics();
    metrics.startController('memcached');
    expect(await series(metrics, 'controller_runtime_reconcile_total')).toEqual([
      'controller_runtime_reconcile_total{controller="memcached",result="error"} 0',
      'controller_runtime_reconcile_total{controller="memcached",result="requeue_after"} 0',
      'controller_runtime_reconcile_total{controller="memcached",result="success"} 0',
    ]);
    expect(await series(metrics, 'controller_runtime_reconcile_errors_total')).toEqual([
      'controller_runtime_reconcile_errors_total{controller="memcached"} 0',
    ]);
  });

  test("an informer's watch restarts exist for every reason before the first restart", async () => {
    const metrics = new Metrics();
    metrics.startWatch('memcacheds');
    expect(await series(metrics, 'opkit_watch_restarts_total')).toEqual([
      'opkit_watch_restarts_total{resource="memcacheds",reason="closed"} 0',
      'opkit_watch_restarts_total{resource="memcacheds",reason="error"} 0',
      'opkit_watch_restarts_total{resource="memcacheds",reason="expired"} 0',
    ]);
  });
});
