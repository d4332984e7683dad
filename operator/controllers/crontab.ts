import { BuiltinTypes, customResourceType } from '../../constructs/core/controller';
import { cronJobSchedule } from '../../constructs/crontab/api';
import type { CronTab } from '../../constructs/crontab/api';
import { cronTabController } from '../../constructs/crontab/controller';
import { CronTabCronJob } from '../../constructs/crontab/crontab-cronjob';
import { applyIfChanged, applyStatusIfChanged, controllerReference, rejectionOf } from '../runtime/children';
import { Condition, ConditionList, findCondition } from '../runtime/conditions';
import { Controller, ReconcileContext, Request, Result } from '../runtime/controller';
import { Informer } from '../runtime/informer';
import { Manager } from '../runtime/manager';
import { renderConstructs } from '../runtime/render';
import { apiVersionOf, KubeObject, objectKey } from '../runtime/resource';
import type { ControllerSetupOptions } from './registry';

type CronTabObject = CronTab & KubeObject;
interface CronJob extends KubeObject {
  spec?: { schedule?: string };
  status?: { lastScheduleTime?: string; active?: unknown[] };
}

const cronTabType = customResourceType(cronTabController.for);

export function desiredCronJob(ct: CronTabObject): KubeObject {
  const [cronJob] = renderConstructs(scope => new CronTabCronJob(scope, 'crontab', {
    name: ct.metadata.name,
    namespace: ct.metadata.namespace,
    spec: ct.spec,
    owner: controllerReference(ct, cronTabType),
  }));
  return cronJob;
}

/** The status a CronTab should show. Pure; `now` only stamps conditions that change. */
export function desiredCronTabStatus(ct: CronTabObject, cronJob: CronJob | undefined, applyError: string | undefined, now = new Date()) {
  const generation = ct.metadata.generation ?? 0;
  const { schedule, droppedSeconds } = cronJobSchedule(ct.spec.cronSpec);
  const list = new ConditionList(ct.status?.conditions as Condition[] | undefined, generation, now);
  const { set } = list;
  set('Available', cronJob && !applyError ? 'True' : 'False', cronJob && !applyError ? 'Scheduled' : 'NoCronJob',
    cronJob && !applyError ? `CronJob ${ct.metadata.name} runs on "${schedule}"` : 'no CronJob runs this CronTab');
  if (applyError) set('Degraded', 'True', 'InvalidCronJob', applyError.slice(0, 1024));
  else set('Degraded', 'False', 'AsExpected', 'the CronJob matches the spec');
  if (droppedSeconds !== undefined) {
    set('ScheduleExact', 'False', 'SecondsDropped', `CronJobs schedule to the minute: the seconds field "${droppedSeconds}" was dropped, so "${ct.spec.cronSpec}" runs on "${schedule}", at most once a minute`);
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

export function setupCronTabController(mgr: Manager, options: ControllerSetupOptions): Controller {
  const cronTabs = mgr.informer<CronTabObject>(cronTabType);
  const cronJobs = mgr.informer<CronJob>(BuiltinTypes.CronJob);
  const controller = new Controller({ ...options, name: cronTabController.name, reconciler: (req, ctx) => reconcileCronTab(req, ctx, cronTabs, cronJobs) });
  return controller.for(cronTabs).owns(cronJobs, { apiVersion: apiVersionOf(cronTabType), kind: cronTabType.kind });
}

async function reconcileCronTab(req: Request, ctx: ReconcileContext, cronTabs: Informer<CronTabObject>, cronJobs: Informer<CronJob>): Promise<Result | void> {
  const ct = cronTabs.get(objectKey(req));
  if (!ct || ct.metadata.deletionTimestamp) return;
  let cronJob = cronJobs.get(objectKey(req));
  const existed = !!cronJob;
  const applyError = await rejectionOf(ctx, ct, 'InvalidCronJob', async () => {
    const result = await applyIfChanged(ctx.client, BuiltinTypes.CronJob, desiredCronJob(ct), cronJob);
    cronJob = result.object;
    if (result.applied) {
      await ctx.recorder.record(ct, 'Normal', existed ? 'Updated' : 'Created', `${existed ? 'Updated' : 'Created'} CronJob ${ct.metadata.name} on "${cronJob.spec?.schedule}"`);
    }
  });
  if (applyError) cronJob = undefined;
  const status = desiredCronTabStatus(ct, cronJob, applyError);
  const exact = status.conditions.find(c => c.type === 'ScheduleExact')!;
  const wasExact = findCondition(ct.status?.conditions as Condition[] | undefined, 'ScheduleExact');
  // Tell once per change of the spec, not on every reconcile.
  if (exact.status === 'False' && (wasExact?.status !== 'False' || wasExact.observedGeneration !== exact.observedGeneration)) {
    await ctx.recorder.record(ct, 'Warning', 'SecondsDropped', exact.message);
  }
  await applyStatusIfChanged(ctx.client, cronTabType, ct, status);
}
