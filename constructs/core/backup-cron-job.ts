import { k8s } from 'cdk8s-plus-27';
import { type Construct } from 'constructs';
import { restrictedPodSecurityContext } from './security';

export interface BackupCronJobProps {
  readonly metadata: k8s.ObjectMeta;
  /** Labels of the Jobs and their pods. */
  readonly labels: Record<string, string>;
  /** 5-field cron expression or macro. */
  readonly schedule: string;
  /** The uid the pod runs as (and owns the backup volume's files as). */
  readonly uid: number;
  /** Containers run before `containers`, e.g. taking the snapshot. @default none */
  readonly initContainers?: k8s.Container[];
  readonly containers: k8s.Container[];
  readonly volumes: k8s.Volume[];
}

/**
 * A CronJob that takes backups: never two at once (`Forbid`), the last 3 successful and 3
 * failed Jobs kept for inspection, each Job as `backupJobSpec` makes it.
 */
export function backupCronJob(scope: Construct, id: string, props: BackupCronJobProps): k8s.KubeCronJob {
  return new k8s.KubeCronJob(scope, id, {
    metadata: props.metadata,
    spec: {
      schedule: props.schedule,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: { metadata: { labels: props.labels }, spec: backupJobSpec(props) },
    },
  });
}

/** One backup Job's spec (a scheduled one or a final one): 2 retries, restricted pods without an API token. */
export function backupJobSpec(props: Omit<BackupCronJobProps, 'metadata' | 'schedule'>): k8s.JobSpec {
  return {
    backoffLimit: 2,
    template: {
      metadata: { labels: props.labels },
      spec: {
        restartPolicy: 'OnFailure',
        automountServiceAccountToken: false,
        securityContext: restrictedPodSecurityContext(props.uid),
        initContainers: props.initContainers,
        containers: props.containers,
        volumes: props.volumes,
      },
    },
  };
}
