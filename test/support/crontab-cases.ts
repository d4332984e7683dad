/** Invalid CronTab specs and the field each rejection must name (unit and integration tiers). */
export const invalidCronTabSpecs: [what: string, spec: unknown, field: string][] = [
  ['no cronSpec', { image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec of 3 fields', { cronSpec: '* * *', image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec of 7 fields', { cronSpec: '* * * * * * *', image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec with bad characters', { cronSpec: '* * * * ;rm', image: 'busybox' }, 'spec.cronSpec'],
  ['an unknown macro', { cronSpec: '@sometimes', image: 'busybox' }, 'spec.cronSpec'],
  ['no image', { cronSpec: '*/5 * * * *' }, 'spec.image'],
  ['an empty image', { cronSpec: '*/5 * * * *', image: '' }, 'spec.image'],
  ['replicas 0', { cronSpec: '*/5 * * * *', image: 'busybox', replicas: 0 }, 'spec.replicas'],
  ['replicas as a string', { cronSpec: '*/5 * * * *', image: 'busybox', replicas: 'two' }, 'spec.replicas'],
  // Each field within its range, no step 0, no characters CronJobs do not understand.
  ['a minute of 61', { cronSpec: '61 * * * *', image: 'busybox' }, 'spec.cronSpec'],
  ['L (last day), which CronJobs do not support', { cronSpec: '0 0 L * *', image: 'busybox' }, 'spec.cronSpec'],
  ['a step of 0', { cronSpec: '*/0 * * * *', image: 'busybox' }, 'spec.cronSpec'],
  ['day of week 8', { cronSpec: '0 0 * * 8', image: 'busybox' }, 'spec.cronSpec'],
  ['a 200 KB cronSpec', { cronSpec: `${'1,'.repeat(100_000)}1 * * * *`, image: 'busybox' }, 'spec.cronSpec'],
  [
    'a 6-field spec with a 40 KB seconds field',
    { cronSpec: `${'1,'.repeat(20_000)}1 * * * * *`, image: 'busybox' },
    'spec.cronSpec',
  ],
  ['an hour of 24', { cronSpec: '0 24 * * *', image: 'busybox' }, 'spec.cronSpec'],
  ['day of month 0', { cronSpec: '0 0 0 * *', image: 'busybox' }, 'spec.cronSpec'],
  ['month 13', { cronSpec: '0 0 1 13 *', image: 'busybox' }, 'spec.cronSpec'],
  ['an image with an upper-case repository', { cronSpec: '* * * * *', image: 'Busybox' }, 'spec.image'],
];

/** Schedules every CronJob accepts: they must stay accepted. */
export const validCronSpecs: string[] = [
  '* * * * * *',
  '*/5 * * * *',
  '0 2 * * *',
  '0 0 1 1 *',
  '0,15,30,45 9-17 * * 1-5',
  '0 0 * * SUN',
  '0 0 1 JAN,jul *',
  '@hourly',
  '@daily',
  '5-55/10 * * * *',
  '0 0 ? * MON-FRI',
  '59 23 31 12 6',
  '0 0 * * 0',
];
