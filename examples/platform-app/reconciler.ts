/** The Greeting operator's image runs this: the kit's runtime with this app's controller. */
import { runOperator } from 'cdk8s-operator-kit/reconciler';
import { greetingController } from './greeting';

runOperator({ controllers: [greetingController] }).then((code) => process.exit(code));
