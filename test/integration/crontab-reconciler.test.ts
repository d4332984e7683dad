import * as path from 'node:path';
import { invalidCronTabSpecs, validCronSpecs } from '../support/crontab-cases';
import { eventually, getJson, kubectl, kubectlOk, testWithNodes } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import type { ReconcilerProcess } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const SEED = path.join(ROOT, 'test', 'fixtures', 'seeds', '000-my-new-cron-object.yaml');
const NAME = 'my-new-cron-object';

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let get: OperatorUnderTest['get'];

beforeAll(async () => {
  ({ ns, reconciler, get } = await startOperatorUnderTest({
    operator: 'crontab',
    controllers: 'crontab',
    crds: ['crontabs.stable.example.com'],
  }));
  // Runs every minute from now on; checked by the last test, so the wait overlaps the others.
  kubectlOk(['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'minutely' },
      spec: { cronSpec: '* * * * *', image: 'busybox:1.36', replicas: 2 },
    }),
  });
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe('the crontab controller against a real API server', () => {
  test.each(invalidCronTabSpecs)('the API server rejects %s, naming the field', (_what, spec, field) => {
    const r = kubectl(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'bad' }, spec }),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(field);
  });

  test.each(validCronSpecs)('the API server accepts the cron expression %s', (cronSpec) => {
    kubectlOk(['create', '--dry-run=server', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'stable.example.com/v1',
        kind: 'CronTab',
        metadata: { name: 'ok' },
        spec: { cronSpec, image: 'busybox' },
      }),
    });
  });

  test("seed 000's CronTab applies verbatim and becomes a CronJob, owned, with the seconds dropped and reported", async () => {
    kubectlOk(['apply', '-n', ns, '-f', SEED]);
    const ct = get('ct', NAME);
    expect(ct.spec).toEqual({ cronSpec: '* * * * * *', image: 'busybox', replicas: 1 });
    const cj = await eventually('the CronJob', () => get('cronjob', NAME));
    expect(cj.spec.schedule).toBe('* * * * *');
    expect(cj.spec.jobTemplate.spec.parallelism).toBe(1);
    expect(cj.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'CronTab', name: NAME, uid: ct.metadata.uid, controller: true }),
    ]);
    const status = await eventually('status', () =>
      get('ct', NAME).status?.conditions ? get('ct', NAME).status : undefined,
    );
    expect(status.conditions.find((c: any) => c.type === 'ScheduleExact')).toMatchObject({
      status: 'False',
      reason: 'SecondsDropped',
    });
    await eventually('a SecondsDropped Warning Event', () =>
      getJson(['get', 'events.events.k8s.io', '-n', ns]).items.some(
        (e: any) => e.type === 'Warning' && e.reason === 'SecondsDropped' && e.regarding.name === NAME,
      )
        ? true
        : undefined,
    );
  });

  test('spec updates propagate; drift is reverted; a deleted CronJob comes back', async () => {
    kubectlOk([
      'patch',
      'ct',
      NAME,
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"cronSpec":"*/10 * * * *","replicas":3,"image":"busybox:1.36"}}',
    ]);
    await eventually('the new schedule', () => {
      const cj = get('cronjob', NAME);
      return cj?.spec.schedule === '*/10 * * * *' && cj.spec.jobTemplate.spec.parallelism === 3 ? cj : undefined;
    });
    await eventually('ScheduleExact=True', () =>
      get('ct', NAME).status?.conditions?.find((c: any) => c.type === 'ScheduleExact')?.status === 'True'
        ? true
        : undefined,
    );
    kubectlOk(['patch', 'cronjob', NAME, '-n', ns, '--type=merge', '-p', '{"spec":{"schedule":"0 0 * * *"}}']);
    await eventually('the drift to be reverted', () =>
      get('cronjob', NAME)?.spec.schedule === '*/10 * * * *' ? true : undefined,
    );
    const uid = get('cronjob', NAME).metadata.uid;
    kubectlOk(['delete', 'cronjob', NAME, '-n', ns]);
    await eventually('a new CronJob', () =>
      get('cronjob', NAME) && get('cronjob', NAME).metadata.uid !== uid ? true : undefined,
    );
  });

  testWithNodes(
    'a CronTab that runs every minute: its Job completes, and the status has lastScheduleTime',
    async () => {
      const job = await eventually(
        'a completed Job of the CronJob',
        () =>
          getJson(['get', 'jobs', '-n', ns]).items.find(
            (j: any) => j.metadata.ownerReferences?.[0]?.name === 'minutely' && j.status?.succeeded === 2,
          ),
        120_000,
      );
      expect(job.spec).toMatchObject({ parallelism: 2, completions: 2 });
      const ct = await eventually(
        'lastScheduleTime in status',
        () => (get('ct', 'minutely').status?.lastScheduleTime ? get('ct', 'minutely') : undefined),
        30_000,
      );
      expect(Date.parse(ct.status.lastScheduleTime)).toBeGreaterThan(Date.now() - 5 * 60_000);
      expect(ct.status.conditions.find((c: any) => c.type === 'Available')).toMatchObject({ status: 'True' });
    },
  );

  test('kubectl get ct shows the schedule; deleting the CronTab deletes its CronJob', async () => {
    const out = kubectlOk(['get', 'ct', '-n', ns]);
    expect(out.split('\n')[0]!.split(/\s{2,}/)).toEqual(['NAME', 'SCHEDULE', 'IMAGE', 'LAST SCHEDULE', 'AGE']);
    kubectlOk(['delete', 'ct', NAME, '-n', ns]);
    await eventually('the CronJob to be collected', () => (get('cronjob', NAME) ? undefined : true), 90_000);
  });
});
