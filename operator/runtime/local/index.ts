/**
 * A reconciler run out of cluster against the package's local control plane: its webhooks served on
 * loopback and routed there by the plane's egress proxy.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { addRoute, egressRoutesBeside, readRoutes, ROUTES_FILE } from './egress-routes';
export { isLoopbackHost } from './loopback-host';
export {
  isLoopbackServer,
  LOOPBACK_HOST,
  loopbackCertificate,
  readCallers,
  routeToLoopback,
  serviceHost,
  servicesCalled,
} from './loopback-webhooks';
