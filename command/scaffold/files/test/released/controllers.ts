/**
 * The controllers of the version running in your clusters, frozen. When you release, copy
 * controllers.ts and the kinds it imports here as they are (e.g. git show v1.0.0:kinds/x.ts), and
 * import them below: test/upgrade.integration.test.ts then proves that the next version upgrades
 * the released one as `cdk8s-operator-kit plan` says, losing nothing through conversion. Until
 * the first release this is the code at hand, and the upgrade must change nothing.
 */
export { controllers } from '../../controllers';
