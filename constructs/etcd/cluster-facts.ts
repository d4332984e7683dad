import type { ExternalContext } from '../contract';
import type { EtcdClientTls, EtcdEndpoint, EtcdMember } from './etcd-api';
import type { EtcdTransport } from './tls';
import type { EtcdTopology } from './topology';

/** What one reconcile's membership step starts from (see `ClusterView`). */
export interface ClusterFacts {
  readonly name: string;
  readonly namespace: string;
  readonly want: number;
  readonly wantVersion: string;
  readonly current: EtcdTopology;
  readonly members: readonly EtcdMember[];
  /** The client endpoints the member list was asked at. */
  readonly probe: readonly EtcdEndpoint[];
  readonly transport: EtcdTransport;
  /** The operator's client certificate, with TLS. */
  readonly tls?: EtcdClientTls;
  /** The uid of each member claim there is now, by claim name (`data-<pod>`). */
  readonly claims: ReadonlyMap<string, string>;
  /** The claim each member last ran on healthy, by member ID, as the status recorded it. */
  readonly recordedClaims: ReadonlyMap<string, string>;
  /** The gate of every write to etcd (see `etcdWrite`). */
  readonly context: ExternalContext;
}
