/**
 * Lease elections: one leader (client-go's `leaderelection`) and one holder per shard range.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { LeaderElector } from './leader-election';
export type { LeaderElectionOptions } from './leader-election';
export { ShardElector } from './shard-election';
