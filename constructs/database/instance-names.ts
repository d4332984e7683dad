/** How a Database's instances are named, counted and labelled. */
import type { DatabaseSpec } from './api';

/** The pod of instance `ordinal`: the StatefulSet's name and the ordinal. */
export const instancePod = (database: string, ordinal: number) => `${database}-${ordinal}`;

/** The ordinal of an instance's pod, or undefined for a name that is none of the Database's. */
export function instanceOrdinal(database: string, pod: string): number | undefined {
  const match = new RegExp(`^${database.replace(/[.]/g, '\\.')}-(\\d+)$`).exec(pod);
  return match ? Number(match[1]) : undefined;
}

/** The label an instance's pod carries while its server streams as a standby: `<name>-ro` selects it. */
export const ROLE_LABEL = 'database.example.com/role';
export const STANDBY_ROLE = 'standby';

/** The label the StatefulSet controller puts on each pod: its name (the primary's Services select it). */
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';

/** How many instances the spec asks: 1 unless it says (a spec read from a file before the API server's defaults). */
export function instanceCount(spec: DatabaseSpec): number {
  return (spec as Partial<DatabaseSpec>).instances ?? 1;
}

/** How many standbys must have a commit before it is acknowledged: 0 unless the spec says. */
export function synchronousCount(spec: DatabaseSpec): number {
  return (spec as Partial<DatabaseSpec>).synchronousStandbys ?? 0;
}
