/** Invalid CronTab specs and the field each rejection must name (unit and integration tiers). */
export const invalidCronTabSpecs: Array<[what: string, spec: unknown, field: string]> = [
  ['no cronSpec', { image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec of 3 fields', { cronSpec: '* * *', image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec of 7 fields', { cronSpec: '* * * * * * *', image: 'busybox' }, 'spec.cronSpec'],
  ['a cronSpec with bad characters', { cronSpec: '* * * * ;rm', image: 'busybox' }, 'spec.cronSpec'],
  ['an unknown macro', { cronSpec: '@sometimes', image: 'busybox' }, 'spec.cronSpec'],
  ['no image', { cronSpec: '*/5 * * * *' }, 'spec.image'],
  ['an empty image', { cronSpec: '*/5 * * * *', image: '' }, 'spec.image'],
  ['replicas 0', { cronSpec: '*/5 * * * *', image: 'busybox', replicas: 0 }, 'spec.replicas'],
  ['replicas as a string', { cronSpec: '*/5 * * * *', image: 'busybox', replicas: 'two' }, 'spec.replicas'],
];
