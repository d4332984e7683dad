/** The operator's controllers, one per kind; `cdk8s-operator-kit create kind` adds to these lists. */
import type { Construct } from 'constructs';
import { addWebSiteSample, webSiteController } from './kinds/web-site';
// cdk8s-operator-kit: imports

export const controllers = [
  webSiteController,
  // cdk8s-operator-kit: controllers
];

/** One sample resource per kind, written to dist/ beside the operator. */
export const samples: ((scope: Construct) => void)[] = [
  addWebSiteSample,
  // cdk8s-operator-kit: samples
];
