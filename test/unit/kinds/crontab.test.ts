import * as fs from 'node:fs';
import * as path from 'node:path';
import { cronJobSchedule } from '../../../constructs/crontab/api';
import { structuralProblems } from '../../../constructs/core/structural';
import { cronTabController, desiredCronTabStatus } from '../../../constructs/crontab/controller';
import { renderChildren } from '../../../operator/runtime/children/render';

const desiredCronJob = (ct: any) => renderChildren(cronTabController, ct)[0];
import { validateBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { invalidCronTabSpecs, validCronSpecs } from '../../support/crontab-cases';
import { one, parseYaml, podSpecsOf, synthProject } from '../../support/synth';

const result = synthProject();
const files = Object.fromEntries(
  Object.entries(result.files).filter(([f]) => /^\d{4}-crontab|samples\/crontab/.test(f)),
);
const objects = Object.keys(files)
  .filter((f) => !f.includes('/'))
  .sort()
  .flatMap((f) => parseYaml(files[f]));
const crd = one(objects, 'CustomResourceDefinition', 'crontabs.stable.example.com');
const validator = new CrdValidator(crd);
const SEED = path.join(__dirname, '..', '..', 'fixtures', 'seeds', '000-my-new-cron-object.yaml');

const cronTab = (cronSpec: string, extra: object = {}) =>
  ({
    apiVersion: 'stable.example.com/v1',
    kind: 'CronTab',
    metadata: { name: 'tick', namespace: 'jobs', uid: 'u-3', generation: 5 },
    spec: { cronSpec, image: 'busybox:1.36', replicas: 2, ...extra },
  }) as any;

describe('synthesized CronTab operator', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test("the CRD is seed 000's: stable.example.com/v1 CronTab, short name ct, namespaced, structural", () => {
    expect(crd.spec).toMatchObject({
      group: 'stable.example.com',
      scope: 'Namespaced',
      names: { kind: 'CronTab', plural: 'crontabs', singular: 'crontab', shortNames: ['ct'] },
    });
    const v = crd.spec.versions[0];
    expect(v.name).toBe('v1');
    expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
    expect(v.schema.openAPIV3Schema.properties.spec.required).toEqual(['cronSpec', 'image']);
    expect(v.schema.openAPIV3Schema.properties.spec.properties.replicas).toMatchObject({ minimum: 1, default: 1 });
  });

  test('RBAC: CronJobs only, no deletes', () => {
    const role = one(objects, 'ClusterRole', 'crontab-manager-role');
    const grants = role.rules
      .flatMap((r: any) => r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`))
      .sort();
    expect(grants).toEqual(
      [
        'authentication.k8s.io/tokenreviews: create',
        'authorization.k8s.io/subjectaccessreviews: create',
        'batch/cronjobs: get,list,watch,create,update,patch',
        'events.k8s.io/events: create,patch',
        'stable.example.com/crontabs/finalizers: update',
        'stable.example.com/crontabs/status: get,update,patch',
        'stable.example.com/crontabs: get,list,watch',
      ].sort(),
    );
    for (const o of objects)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
  });

  test("the synthesized sample and seed 000's sample validate verbatim", () => {
    expect(validator.validate(parseYaml(files['samples/crontab-sample.k8s.yaml'])[0])).toEqual([]);
    expect(validator.validate(parseYaml(fs.readFileSync(SEED, 'utf8'))[0])).toEqual([]);
  });

  test.each(invalidCronTabSpecs)('rejects %s, naming the field', (_what, spec, field) => {
    expect(
      validator
        .validate({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'x' }, spec })
        .join('\n'),
    ).toContain(field);
  });

  test.each(['*/5 * * * *', '0 0 * * 1-5', '@hourly', '30 2 1,15 * MON', '* * * * * *', ...validCronSpecs])(
    'accepts the cron expression %s',
    (cronSpec) => {
      expect(
        validator.validate({
          apiVersion: 'stable.example.com/v1',
          kind: 'CronTab',
          metadata: { name: 'x' },
          spec: { cronSpec, image: 'busybox' },
        }),
      ).toEqual([]);
    },
  );
});

describe('the CronJob of a CronTab', () => {
  test('schedule, image, parallelism = replicas, history limits, restricted pods, owner reference', () => {
    const cj = desiredCronJob(cronTab('*/5 * * * *')) as any;
    expect(() => {
      validateBuiltin(cj);
    }).not.toThrow();
    expect(cj.spec).toMatchObject({
      schedule: '*/5 * * * *',
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    expect(cj.spec.jobTemplate.spec).toMatchObject({ parallelism: 2, completions: 2 });
    expect(cj.metadata.ownerReferences[0]).toMatchObject({
      kind: 'CronTab',
      name: 'tick',
      uid: 'u-3',
      controller: true,
    });
    const { spec } = podSpecsOf([cj])[0]!;
    expect(spec.containers[0].image).toBe('busybox:1.36');
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(spec.containers[0].securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  test('a seconds field is dropped, and the status says so', () => {
    expect(cronJobSchedule('* * * * * *')).toEqual({ schedule: '* * * * *', droppedSeconds: '*' });
    expect(cronJobSchedule('@daily')).toEqual({ schedule: '@daily' });
    expect((desiredCronJob(cronTab('30 */5 * * * *')) as any).spec.schedule).toBe('*/5 * * * *');
    const s = desiredCronTabStatus(cronTab('30 */5 * * * *'), {
      cronJob: { metadata: { name: 'tick' }, status: { lastScheduleTime: '2026-01-01T00:05:00Z' } },
    });
    const exact = s.conditions!.find((c) => c.type === 'ScheduleExact')!;
    expect(exact).toMatchObject({ status: 'False', reason: 'SecondsDropped', observedGeneration: 5 });
    expect(exact.message).toContain('"30" was dropped');
    expect(s).toMatchObject({ schedule: '*/5 * * * *', lastScheduleTime: '2026-01-01T00:05:00Z', cronJob: 'tick' });
    expect(
      desiredCronTabStatus(cronTab('*/5 * * * *'), {}).conditions?.find((c) => c.type === 'ScheduleExact')!.status,
    ).toBe('True');
  });
});
