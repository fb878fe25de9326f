/**
 * The transport conformance suite: the black-box API scenarios every transport runs.
 * @module
 */
export { apiScenarios, type ScenarioTarget } from './suite.ts';
