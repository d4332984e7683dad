import { type CustomResource, CustomResourceKind } from '../core/kind';
import {
  CRON_MAX_LENGTH,
  CRON_WITH_SECONDS_PATTERN,
  IMAGE_REFERENCE_MAX_LENGTH,
  IMAGE_REFERENCE_PATTERN,
} from '../core/formats';
import { conditionsSchema, type Static, t } from '../core/schema';

export const cronTabSpecSchema = t.object(
  {
    cronSpec: t.string({
      required: true,
      maxLength: CRON_MAX_LENGTH,
      pattern: CRON_WITH_SECONDS_PATTERN,
      description:
        'When to run, as a cron expression: 5 fields, 6 with a leading seconds field, or a macro like @hourly. CronJobs schedule to the minute, so a seconds field is dropped (see the ScheduleExact condition).',
    }),
    image: t.string({
      required: true,
      minLength: 1,
      maxLength: IMAGE_REFERENCE_MAX_LENGTH,
      pattern: IMAGE_REFERENCE_PATTERN,
      description: 'Container image each run executes: [registry/]repository[:tag][@sha256:digest].',
    }),
    replicas: t.integer({
      default: 1,
      minimum: 1,
      maximum: 100,
      description: 'Pods each run starts in parallel (Job parallelism and completions).',
    }),
  },
  { description: 'CronTabSpec defines what runs and when.' },
);

export const cronTabStatusSchema = t.object(
  {
    cronJob: t.string({ description: 'Name of the CronJob that runs this CronTab.' }),
    schedule: t.string({ description: 'The schedule the CronJob actually uses (minute resolution).' }),
    lastScheduleTime: t.dateTime({ description: 'When a run was last scheduled.' }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation the status was computed from.',
    }),
    conditions: conditionsSchema(
      'Available, Degraded, and ScheduleExact (False when a seconds field had to be dropped).',
    ),
  },
  { description: 'CronTabStatus is the observed state of a CronTab.' },
);

export type CronTabSpec = Static<typeof cronTabSpecSchema>;
export type CronTabStatus = Static<typeof cronTabStatusSchema>;
export type CronTab = CustomResource<typeof cronTabSpecSchema, typeof cronTabStatusSchema>;

/** `crontabs.stable.example.com`, v1, short name `ct` (seed 000), made real by a CronJob. */
export const cronTabKind = new CustomResourceKind({
  group: 'stable.example.com',
  kind: 'CronTab',
  versions: ['v1'],
  // The CronJob takes the CronTab's name, and each Job adds 11 characters to it.
  maxNameLength: 52,
  description:
    'CronTab runs an image on a cron schedule, through a batch/v1 CronJob kept in step by the crontab operator.',
  spec: cronTabSpecSchema,
  status: cronTabStatusSchema,
  printerColumns: [
    { name: 'Schedule', type: 'string', jsonPath: '.spec.cronSpec' },
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Last Schedule', type: 'date', jsonPath: '.status.lastScheduleTime' },
  ],
  shortNames: ['ct'],
  categories: ['all'],
});

/**
 * The schedule a CronJob can run: a 6-field expression loses its leading seconds field, since
 * CronJobs fire at most once a minute. Says whether anything was dropped.
 */
export function cronJobSchedule(cronSpec: string): { schedule: string; droppedSeconds?: string } {
  const fields = cronSpec.trim().split(/\s+/);
  if (fields.length === 6) return { schedule: fields.slice(1).join(' '), droppedSeconds: fields[0] };
  return { schedule: fields.join(' ') };
}
