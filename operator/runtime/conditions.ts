// Conditions are computed by the kinds' pure status functions (in constructs/), and read here.
export { ConditionList, conditionsOf, findCondition, setCondition } from '../../constructs/contract/conditions';
export type { Condition, ConditionInput } from '../../constructs/contract/conditions';
