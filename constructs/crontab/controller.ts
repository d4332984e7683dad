import { BuiltinTypes, type CronJob, type EventSpec, type Observed } from '../contract';
import type { ControllerDeclaration } from '../core/controller-declaration';
import { DEFAULT_IMAGE } from '../core/kit-image';
import { ConditionList, findCondition } from '../contract/conditions';
import type { CronTab, CronTabStatus } from './api';
import { cronJobSchedule, cronTabKind } from './api';
import { CronTabCronJob } from './crontab-cronjob';

/** What a CronTab's status is made from. */
export interface CronTabStatusInput {
  readonly cronJob?: CronJob;
  /** The API server's refusal of the CronJob. */
  readonly applyError?: string;
  /** Stamps conditions whose status changes. @default the current time */
  readonly now?: Date;
}

/** The status a CronTab should show. Pure. */
export function desiredCronTabStatus(ct: CronTab, input: CronTabStatusInput): CronTabStatus {
  const { cronJob, applyError } = input;
  const now = input.now ?? new Date();
  const generation = ct.metadata.generation ?? 0;
  const { schedule, droppedSeconds } = cronJobSchedule(ct.spec.cronSpec);
  const list = new ConditionList(ct.status?.conditions, generation, now);
  const { set } = list;
  set(
    'Available',
    cronJob && !applyError ? 'True' : 'False',
    cronJob && !applyError ? 'Scheduled' : 'NoCronJob',
    cronJob && !applyError ? `CronJob ${ct.metadata.name} runs on "${schedule}"` : 'no CronJob runs this CronTab',
  );
  list.degraded(
    [applyError !== undefined && { reason: 'InvalidCronJob', message: applyError }],
    'the CronJob matches the spec',
  );
  if (droppedSeconds !== undefined) {
    set(
      'ScheduleExact',
      'False',
      'SecondsDropped',
      `CronJobs schedule to the minute: the seconds field "${droppedSeconds}" was dropped, so "${ct.spec.cronSpec}" runs on "${schedule}", at most once a minute`,
    );
  } else {
    set('ScheduleExact', 'True', 'MinuteSchedule', `runs on "${schedule}" exactly`);
  }
  return {
    cronJob: ct.metadata.name,
    schedule,
    ...(cronJob?.status?.lastScheduleTime ? { lastScheduleTime: cronJob.status.lastScheduleTime } : {}),
    observedGeneration: generation,
    conditions: list.conditions,
  };
}

/** Created or updated CronJobs, and — once per change of the spec — a dropped seconds field. */
export function cronTabEvents(ct: CronTab, observed: Observed, status: CronTab['status']): EventSpec[] {
  const events: EventSpec[] = observed.changes
    .filter((c) => c.kind === 'CronJob' && c.verb !== 'Deleted')
    .map((c) => ({
      type: 'Normal',
      reason: c.verb,
      message: `${c.verb} CronJob ${c.name} on "${observed.children.of(BuiltinTypes.CronJob, c.name)?.spec?.schedule ?? ''}"`,
    }));
  const exact = findCondition(status?.conditions, 'ScheduleExact');
  const was = findCondition(ct.status?.conditions, 'ScheduleExact');
  if (exact?.status === 'False' && (was?.status !== 'False' || was.observedGeneration !== exact.observedGeneration)) {
    events.push({ type: 'Warning', reason: 'SecondsDropped', message: exact.message });
  }
  return events;
}

/** The crontab controller (seed 000's CronTab): one CronJob per CronTab. */
export const cronTabController: ControllerDeclaration<CronTab> = {
  name: 'crontab',
  image: DEFAULT_IMAGE,
  for: cronTabKind,
  owns: [BuiltinTypes.CronJob],
  render: (scope, ct, { owner }) =>
    new CronTabCronJob(scope, 'crontab', {
      name: ct.metadata.name,
      namespace: ct.metadata.namespace,
      spec: ct.spec,
      owner,
    }),
  status: (ct, observed) =>
    desiredCronTabStatus(ct, {
      cronJob: observed.applyError ? undefined : observed.children.of(BuiltinTypes.CronJob, ct.metadata.name),
      applyError: observed.applyError,
      now: observed.now,
    }),
  events: cronTabEvents,
};
