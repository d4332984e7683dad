/**
 * The cache: informers (list then watch, relist on 410 Gone) and what they keep of each object, and the
 * namespace hash ranges a sharded cache holds (client-go's `tools/cache`).
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { cacheTransform } from './cache-transform';
export { cacheDecoder } from './pod-protobuf';
export { Informer } from './informer';
export { ListedObjects, type ObjectReads } from './listed-objects';
export { namespaceInRange, rangesOverlap, shardRange, shardSelector } from './sharding';
export type { HashRange, ShardScope } from './sharding';
